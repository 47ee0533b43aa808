"""What one argv runs next: wrappers, shell payloads and script payloads (docs/approvals.md#parsing).

Pure functions over argv words used by ``shell.parsing._parse``: ``unwrap_step`` says
which program a wrapper (``sudo``, ``env``, ``timeout``, ``xargs`` …) runs, which
texts are shell code to parse recursively (``bash -c``, ``eval``, ``ssh host CMD``,
text piped into a bare shell) and which are script code for detection to scan
(``python -c``, ``node -e``, ``perl -e``, ``awk`` programs). ``normalised_variants``
builds the normalised forms of a line that deny rules and detection also match.
A pure leaf: stdlib only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from multiplex.shell.carriers._tool_code import TAR_OPTIONS, awk_program
from multiplex.shell.carriers._tool_code import carried as carried_code
from multiplex.shell.parsing._argv import (
    ASSIGN,
    NextStep,
    RedirectLike,
    fed_text,
    operand_index,
    option_value,
    opts,
    program_name,
)
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing.runs._equivalents import (
    EQUIVALENT_PROGRAMS,
    archived_away,
    equivalent,
    is_equivalent,
    rsync_removes,
)
from multiplex.shell.parsing.runs._inline import (
    INLINE_HOSTS,
    argv_lines,
    data_url_code,
    inline_code,
)
from multiplex.shell.parsing.runs._launchers import (
    LAUNCHERS,
    RUNNERS,
    SSH_OPTS,
    find_exec,
    launched,
)
from multiplex.shell.parsing.runs._payloads import (
    PAYLOAD_PROGRAMS,
    STDIN_FILES,
    env_payloads,
    payload_step,
)
from multiplex.shell.parsing.runs._verbs import bwrap_command
from multiplex.shell.parsing.runs._wrappers import BUNDLED, RENAMED, VERB_WRAPPERS, WRAPPERS

__all__ = [
    "SHELLS",
    "NextStep",
    "program_name",
    "unwrap_step",
]

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "fish", "csh", "tcsh",
     "oksh", "loksh", "posh", "elvish", "nu", "xonsh"}
)  # fmt: skip
_SHELL_ARG_OPTS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
_XARGS_OPTS = opts(
    "-a --arg-file -d --delimiter -E -e --eof -I -L -l --max-lines -n --max-args "
    "-P --max-procs -s --max-chars --process-slot-var"
)
_ENV_SPLIT = opts("-S --split-string")
_MAX_ITEMS = 1000


def _positional(payload: str, args: Sequence[str]) -> str:
    """Substitute ``$0``, ``$1``… ``"$@"`` of a ``sh -c`` payload with its arguments.

    Unquoted, a value is split into words as bash splits it (``sh -c '$1' x 'rm -rf /'``
    runs ``rm``); inside double quotes it stays one word.
    """
    if not args:
        return payload

    def one(match: re.Match[str]) -> str:
        whole = match.group(0)
        name = match.group(1) or match.group(2) or match.group(3)
        if name in ("@", "*"):
            values = list(args[1:])
        else:
            values = [args[int(name)]] if int(name) < len(args) else []
        opens, closes = whole.startswith('"'), len(whole) > 1 and whole.endswith('"')
        if opens and closes:
            return shlex.join(values) if name == "@" else shlex.quote(" ".join(values))
        if opens or closes:  # one quote of a longer "…$1…" string: keep it, escape the value
            inner = re.sub(r'(["$`\\])', r"\\\1", " ".join(values))
            return f'"{inner}' if opens else f'{inner}"'
        return shlex.join([w for v in values for w in v.split()])

    return re.sub(r'"?\$(?:\{([0-9@*])\}|([0-9@*]))"?|"\$\{([0-9])\}"', one, payload)


def _shell(args: Sequence[str], redirects: Sequence[RedirectLike], stdin: str | None) -> NextStep:
    k = operand_index(args, _SHELL_ARG_OPTS)
    clusters = [a for a in args[:k] if a.startswith("-") and not a.startswith("--")]
    if any("c" in a for a in clusters):
        if k < len(args):
            return NextStep(shell_payloads=(_positional(args[k], args[k + 1 :]),))
        return NextStep()
    if k < len(args) and not any("s" in a for a in clusters) and args[k] not in STDIN_FILES:
        return NextStep()  # runs a script file we cannot see
    fed = fed_text(redirects, stdin)
    return NextStep(shell_payloads=(fed,)) if fed else NextStep()


def _scripts(
    prog: str, args: Sequence[str], redirects: Sequence[RedirectLike], stdin: str | None
) -> NextStep:
    found: list[str] = []
    if _PYTHON.match(prog):
        code, bare = _python_code(args)
        found.extend([code] if code is not None else [])
    elif prog in ("node", "nodejs", "bun", "deno"):
        code = option_value(args, "e", ("--eval", "--print"), len(args))
        if code is None and prog != "deno":
            code = option_value(args, "p", (), len(args))
        if prog == "deno" and tuple(args[:1]) == ("eval",) and len(args) > 1:
            code = args[-1]
        found.extend([code] if code is not None else [])
        found.extend(data_url_code(args))  # --import 'data:text/javascript,…'
        bare = code is None and not any(not a.startswith("-") for a in args)
    elif prog in ("perl", "ruby", "lua", "luajit", "rscript", "r", "php"):
        flag = "r" if prog == "php" else "e"
        for i, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and (flag in arg or "E" in arg[1:]):
                pos = max(arg.find(flag, 1), arg.find("E", 1) if prog == "perl" else -1)
                rest = arg[pos + 1 :]
                if rest:
                    found.append(rest)
                elif i + 1 < len(args):
                    found.append(args[i + 1])
        bare = not found and not any(not a.startswith("-") for a in args)
    elif prog in _AWK:
        found.extend(awk_program(args)[0])  # --source=, -e, or the first operand
        # awk -f /dev/stdin <<< PROGRAM (or -f -): the program is what it is fed
        programs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--file")]
        bare = any(p in STDIN_FILES for p in programs)
    elif prog in INLINE_HOSTS:  # with neither code nor a script, a REPL reads its stdin
        found = inline_code(prog, args)
        bare = not found and not any(not a.startswith("-") for a in args)
    else:
        return NextStep()
    if not bare and not found:  # node /dev/stdin <<< CODE: the script is what it is fed
        bare = next((a for a in args if not a.startswith("-")), "") in STDIN_FILES
    if bare:
        fed = fed_text(redirects, stdin)
        found.extend([fed] if fed else [])
    return NextStep(shell_payloads=argv_lines(args, found), scripts=tuple(found))


def _python_code(args: Sequence[str]) -> tuple[str | None, bool]:
    """``python -c CODE`` (also ``-Bc CODE``, ``-cCODE``), the code ``-m timeit`` runs;
    bare when it reads stdin (``python -``, ``-m code``, ``-m asyncio``)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-" or not arg.startswith("-"):
            return None, arg in STDIN_FILES  # python - or python /dev/stdin: the fed code
        if arg == "--" or arg.startswith("--"):
            return (None, False) if arg == "--" else _python_code(args[i + 1 :])
        for at, letter in enumerate(arg[1:], 2):  # a cluster: -Bc CODE, -Im json.tool
            rest = arg[at:] or (args[i + 1] if i + 1 < len(args) else "")
            step = 1 if arg[at:] else 2
            if letter == "c":
                return rest or None, False
            if letter == "m":
                if rest in ("code", "asyncio"):  # a REPL: what it is fed
                    return None, True
                return (_timeit_code(args[i + step :]) if rest == "timeit" else None), False
            if letter in "WXQ":  # -W arg, -Xdev: the rest of the word (or the next) is its value
                i += step - 1
                break
        i += 1
    return None, True


_TIMEIT = table("number= repeat= setup= unit= process verbose help", "n= r= s= u= p v h")


def _timeit_code(args: Sequence[str]) -> str | None:
    """``python -m timeit [-s SETUP] STATEMENT…``: the setup and the statements it runs."""
    parsed = read_options(args, _TIMEIT)
    code = [*parsed.values("-s", "--setup"), *parsed.operands]
    return "\n".join(code) if code else None


def _xargs(args: Sequence[str], stdin: str | None) -> NextStep:
    k = operand_index(args, _XARGS_OPTS)
    cmd = tuple(args[k:])
    if not cmd:
        return NextStep()
    replace = option_value(args, "I", ("--replace",), k)
    if replace is None and any(a == "-i" or a.startswith("--replace") for a in args[:k]):
        replace = "{}"
    if stdin is None:
        return NextStep(inner=cmd)
    if replace:
        lines = [ln for ln in stdin.splitlines() if ln.strip()][:_MAX_ITEMS] or [""]
        runs = [tuple(w.replace(replace, ln.strip()) for w in cmd) for ln in lines]
        return NextStep(inner=runs[0], sub_commands=tuple(runs[1:]))
    return NextStep(inner=cmd + tuple(stdin.split()[:_MAX_ITEMS]))


def unwrap_step(
    argv: tuple[str, ...], redirects: Sequence[RedirectLike], stdin: str | None
) -> NextStep:
    """What ``argv`` runs beyond itself; ``stdin`` is text known to be piped into it."""
    prog = program_name(argv[0])
    if prog not in _CARRIERS and not (
        (prog.startswith("py") and _PYTHON.match(prog)) or prog.startswith("uu-")
    ):
        return _NOTHING  # most programs run nothing else: skip the chain below
    args = argv[1:]
    if is_equivalent(prog) and (same := equivalent(prog, args)) is not None:
        return same  # cmake -E rm, gio copy, rimraf …: the coreutils command they perform
    if prog in SHELLS:
        return _shell(args, redirects, stdin)
    if prog == "eval":
        return NextStep(shell_payloads=(" ".join(args),)) if args else NextStep()
    if prog == "xargs":
        return _xargs(args, fed_text(redirects, stdin))
    carried = payload_step(prog, args, redirects, stdin)
    if prog == "rsync" and (emptied := rsync_removes(args)) is not None:  # --delete SRC/ DEST
        extra = carried or NextStep()
        return NextStep(extra.inner, extra.shell_payloads, (("rm", "-rf", emptied),), extra.scripts)
    removed: tuple[str, ...] = ()  # what an archiver deletes once archived
    if prog in ("tar", "gtar") and "--rem" in " ".join(args):  # --remove-files
        parsed = read_options(args, TAR_OPTIONS)
        removed = parsed.operands if parsed.has("--remove-files") else ()
    elif prog in ("zip", "7z", "7za", "7zr"):  # zip -m, 7z -sdel
        removed = archived_away(prog, args)
    if removed:
        extra = carried or NextStep()
        gone = ("rm", "-rf", *removed)
        return NextStep(extra.inner, extra.shell_payloads, (gone,), extra.scripts)
    # perf record, docker exec, kubectl exec --, npx, nodemon --exec …; npx --script-shell=…
    if prog in LAUNCHERS and (started := launched(prog, args)) is not None:
        extra = carried or NextStep()
        return NextStep(
            started.inner, started.shell_payloads + extra.shell_payloads, (), extra.scripts
        )
    if carried is not None:
        return carried
    if prog == "find":
        return NextStep(sub_commands=find_exec(args))
    if prog in ("su", "runuser", "script", "flock"):
        code = option_value(args, "c", ("--command", "--session-command"), len(args))
        if code is not None:
            return NextStep(shell_payloads=(code,))
        if prog == "runuser" and option_value(args, "u", ("--user",), len(args)) is None:
            return NextStep()
    if prog == "watch":
        k = operand_index(args, opts("-n --interval -q --equexit"))
        if k < len(args):
            if any(a in ("-x", "--exec") for a in args[:k]):
                return NextStep(inner=tuple(args[k:]))
            return NextStep(shell_payloads=(" ".join(args[k:]),))
        return NextStep()
    if prog == "autossh":  # autossh [-M PORT] SSH-ARGUMENTS
        k = 2 if args[:1] == ("-M",) else 1 if args[:1] and args[0].startswith("-M") else 0
        return NextStep(inner=("ssh", *args[k:]))
    if prog == "ssh":
        k = operand_index(args, SSH_OPTS)
        local = carried_code(prog, args).payloads  # -o ProxyCommand=…
        # OpenSSH reads options after the host too (ssh h -t CMD), up to the command.
        k += 1 + operand_index(args[k + 1 :], SSH_OPTS)
        remote = (" ".join(args[k:]),) if k < len(args) else ()
        return NextStep(shell_payloads=local + remote)
    if prog == "env":
        k = operand_index(args, _ENV_SPLIT | WRAPPERS["env"][0], assignments=True)
        split = option_value(args, "S", ("--split-string",), k)
        if split is not None:  # env -S "rm -rf /": the string is split into argv
            try:
                words = shlex.split(split)
            except ValueError:
                words = split.split()
            return NextStep(inner=(*words, *args[k:]))
        carried_env = env_payloads([a for a in args[:k] if ASSIGN.match(a)])
        inner = tuple(args[k:]) if k < len(args) else None
        return NextStep(inner=inner, shell_payloads=carried_env)
    if prog in RENAMED:  # kubecolor delete ns x: kubectl delete ns x
        return NextStep(inner=(RENAMED[prog], *args))
    if prog in BUNDLED:  # microk8s kubectl delete pod x: kubectl delete pod x
        if args[:1] and args[0] in BUNDLED[prog]:
            rest = args[2:] if args[1:2] == ("--",) else args[1:]
            return NextStep(inner=(args[0], *rest))
        return NextStep()
    if prog in _RUN_VERBS:
        verb, with_arg = _RUN_VERBS[prog]
        if args[:1] == (verb,):
            k = operand_index(args[1:], with_arg) + 1
            return NextStep(inner=tuple(args[k:])) if k < len(args) else NextStep()
        return NextStep()
    if prog == "bwrap":  # bwrap OPTIONS COMMAND: its options take up to three values
        k = bwrap_command(args)
        return NextStep(inner=tuple(args[k:])) if k < len(args) else NextStep()
    if prog in WRAPPERS:
        with_arg, positional, assignments = WRAPPERS[prog]
        k = operand_index(args, with_arg, assignments=assignments) + positional
        carried_env = env_payloads([a for a in args[:k] if ASSIGN.match(a)]) if assignments else ()
        if prog in ("strace", "ltrace"):  # -o '|CMD': what it traces is written into CMD
            carried_env += carried_code(prog, args).payloads
        inner = tuple(args[k:]) if k < len(args) else None
        return NextStep(inner=inner, shell_payloads=carried_env)
    return _scripts(prog, args, redirects, stdin)


_NOTHING = NextStep()
# uv run, poetry run …, and the wrappers that take a verb first (podman unshare CMD).
_RUN_VERBS = {**RUNNERS, **VERB_WRAPPERS}
_CARRIERS = frozenset(
    {*SHELLS, *WRAPPERS, *RUNNERS, *VERB_WRAPPERS, *BUNDLED, *RENAMED, *_AWK, *PAYLOAD_PROGRAMS, *INLINE_HOSTS, "eval", "xargs",
     "find", "su", "bwrap", "zip", "7z", "7za", "7zr", "tar", "gtar", "runuser", "script", "flock", "watch", "ssh", "autossh", "env", "node", "nodejs", "bun", "deno", "perl",
     "ruby", "lua", "luajit", "rscript", "r", "php", *LAUNCHERS, *EQUIVALENT_PROGRAMS}
)  # fmt: skip
