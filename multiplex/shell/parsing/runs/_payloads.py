"""Builtins and programs that carry code in their arguments or environment (docs/approvals.md#parsing).

``payload_step`` says what ``trap``, ``alias``, ``coproc``, ``source``/``.``,
``at``/``batch``, ``parallel``, ``sg``, ``tmux`` and ``git`` (``-c alias.x=!…``,
``core.pager``, ``core.sshCommand``, ``rebase --exec`` …) run; ``env_payloads``
reads the variables whose value a program runs as a command (``GIT_PAGER``,
``GIT_SSH_COMMAND``, ``PAGER``, ``BASH_ENV`` …). Every such text is parsed and
checked like a line of its own, so hardline and deny rules hold inside it.
A pure leaf: stdlib and ``shell.parsing._argv`` only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from multiplex.shell.carriers._tool_code import CARRYING, carried
from multiplex.shell.parsing._argv import (
    ASSIGN,
    NextStep,
    RedirectLike,
    fed_text,
    operand_index,
    option_value,
    opts,
)
from multiplex.shell.parsing._getopt import read_options, table
from multiplex.shell.parsing._names import NAME_TAKERS, names_step

__all__ = [
    "COMMAND_VARIABLES",
    "OFF_WORDS",
    "PAYLOAD_PROGRAMS",
    "STDIN_FILES",
    "TOOLCHAIN_VARIABLES",
    "cron_commands",
    "dollar_parens",
    "env_payloads",
    "git_config_payload",
    "git_config_write",
    "payload_step",
    "substitutions",
]

# The programs payload_step knows (the unwrapper skips every other program quickly).
PAYLOAD_PROGRAMS = frozenset(
    {"trap", "alias", "coproc", "source", ".", "at", "batch", "parallel", "sg", "tmux", "byobu",
     "byobu-tmux", "git", "crontab", *CARRYING, *NAME_TAKERS}
)  # fmt: skip
_WRAPPERS = frozenset({"ssh", "xargs", "strace", "ltrace"})  # carriers that wrap a command too
# Files that are the command's own standard input: "source /dev/stdin <<< CODE".
STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
# Environment variables whose value some program runs as a shell command. make's and
# configure's programs: a recipe runs ``$(CC) …`` through the shell (detection/_variables.py).
TOOLCHAIN_VARIABLES = frozenset(
    {
        "CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "F77", "NM", "RANLIB", "STRIP", "OBJCOPY",
        "OBJDUMP", "HOSTCC", "HOSTCXX",
    }
)  # fmt: skip
COMMAND_VARIABLES = frozenset(
    {
        "GIT_PAGER", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "GIT_SSH_COMMAND", "GIT_SSH",
        "GIT_EXTERNAL_DIFF", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL",
        "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND", "LESSOPEN",
        "LESSCLOSE", "BROWSER", "PROMPT_COMMAND", "BASH_ENV", "ENV", "RSYNC_RSH",
        "CVS_RSH", "FCEDIT", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_VALUE_1", "GIT_CONFIG_VALUE_2",
        "TERMINAL", "PSQL_PAGER", "RSYNC_CONNECT_PROG", *TOOLCHAIN_VARIABLES,
    }
)  # fmt: skip
# git configuration keys whose value is a command git runs (docs/security.md#code-carriers).
_GIT_COMMAND_KEY = re.compile(
    r"^(?:alias\..+|core\.(?:pager|sshcommand|editor|fsmonitor|askpass|hookspath|gitproxy)"
    r"|sequence\.editor|diff\.external|diff\..+\.(?:command|textconv)|pager\..+"
    r"|credential(?:\..+)?\.helper|gpg(?:\..+)?\.program|filter\..+\.(?:clean|smudge|process)"
    r"|merge\..+\.driver|remote\..+\.(?:uploadpack|receivepack|proxy)"
    r"|uploadpack\.packobjectshook|(?:difftool|mergetool)\..+\.cmd|web\.browser|man\..+\.cmd"
    r"|include\.path|includeif\..+\.path|core\.hookspath|instaweb\.(?:httpd|browser)"
    r"|sendemail\.(?:smtpserver|sendmailcmd|tocmd|cccmd|headercmd)"
    r"|core\.alternaterefscommand|submodule\..+\.update|trailer\..+\.(?:command|cmd)"
    r"|hook\..+\.command|init\.templatedir|gpg\.ssh\.defaultkeycommand|browser\..+\.(?:cmd|path)"
    r"|remote\..+\.vcs|interactive\.difffilter)$",
    re.IGNORECASE,
)
_GIT_GLOBAL_VALUE = opts("-C -c --git-dir --work-tree --namespace --exec-path --config-env")
_MAX_RUNS = 256
_PARALLEL_OPTS = opts(
    "-j --jobs -S --sshlogin --joblog -a --arg-file --delay --timeout -d --delimiter -I "
    "--results --tmpdir --workdir --wd -n --max-args -P --colsep -C --halt --retries --env "
    "--tag-string --sshloginfile --basefile --return --transferfile -E --max-procs"
)
_TMUX_RUNS = frozenset(
    {"new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane",
     "respawnp", "respawn-window", "respawnw", "run-shell", "run", "send-keys", "send",
     "pipe-pane", "pipep", "if-shell", "if"}
)  # fmt: skip
_TMUX_OPTS = opts("-s -n -t -c -x -y -F -e -l -p -L -S -f -b")


def git_config_payload(key: str, value: str) -> str | None:
    """The command a ``git -c key=value`` setting makes git run, or None ("" when it lets git
    run commands it names elsewhere: ``protocol.ext.allow=always``)."""
    ext = _EXT_REWRITE.match(key.strip())
    if ext is not None:  # url.ext::sh -c CMD.insteadOf=https://: every https remote runs CMD
        return ext.group(1)
    if _EXT_ALLOWED.match(key.strip()):
        key, value = key.strip().lower(), value.strip().lower()  # safe.directory '*', a proxy
        lets = key.endswith("proxy") or value in OFF_WORDS or f"{key}={value}" == "safe.directory=*"
        return "" if lets or value in ("always", "user") else None
    if not _GIT_COMMAND_KEY.match(key.strip()):
        return None
    if _BANG_ONLY.match(key.strip()) and not value.startswith("!"):
        return None  # submodule.x.update=checkout: one of git's own ways, no command
    return value[1:] if value.startswith("!") else value


_EXT_REWRITE = re.compile(r"^url\.ext::(.+)\.(?:push)?insteadof$", re.IGNORECASE | re.DOTALL)
# Run ext:: URLs' commands; others' repositories' (safe.directory '*'); reroute (proxy, sslVerify).
_EXT_ALLOWED = re.compile(
    r"^(?:protocol\.(?:ext\.)?allow|safe\.directory|https?(?:\..+)?\.(?:proxy|sslverify))$", re.I
)
OFF_WORDS = frozenset({"false", "no", "off", "0"})  # a setting turned off (git, npm, yarn)
# Keys whose value is a command only when it starts with "!" (else a built-in mode).
_BANG_ONLY = re.compile(r"^submodule\..+\.update$", re.IGNORECASE)

_GIT_CONFIG = table(
    "file= blob= type= default= comment= value= global system local worktree add replace-all "
    "unset unset-all get get-all get-regexp get-urlmatch get-color get-colorbool list edit "
    "rename-section remove-section null name-only show-origin show-scope includes no-includes "
    "bool int bool-or-int path expiry-date fixed-value all append regexp=? url=",
    "f= t= l e z",
)
_GIT_CONFIG_READS = (
    "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
    "--list", "-l", "--unset", "--unset-all", "--rename-section", "--remove-section",
)  # fmt: skip
_GIT_CONFIG_VERBS = frozenset({"get", "list", "unset", "rename-section", "remove-section", "edit"})


_GIT_RUNS = {
    "rebase": table("exec= onto= strategy= strategy-option= root interactive", "x= s= X= i"),
    "grep": table(
        "open-files-in-pager=? max-depth= context= after-context= before-context=",
        "O=? e= f= A= B= C= m=",
    ),
    "difftool": table("extcmd= tool-cmd= tool= gui", "x= t= g"),
    "mergetool": table("tool-cmd= tool=", "t="),
    "instaweb": table("httpd= browser= port= module-path= local start stop restart", "d= b= p= l"),
    "send-email": table(
        "sendmail-cmd= to-cmd= cc-cmd= header-cmd= smtp-server= smtp-server-port= from= to= "
        "cc= bcc= subject= annotate compose dry-run quiet",
    ),
    # The program run for the other end of a local (or ssh) remote: git runs it by a shell.
    "clone": table(
        "upload-pack= origin= branch= depth= reference= template= separate-git-dir= config= "
        "jobs= filter= server-option= bare mirror recursive quiet",
        "u= o= b= c= j= q",
    ),
    "fetch": table("upload-pack= depth= jobs= refmap= server-option= all prune", "j= o="),
    "pull": table("upload-pack= depth= jobs= strategy= rebase=? server-option=", "j= s= X= o="),
    "ls-remote": table("upload-pack= exec= sort= server-option= heads tags refs", "o="),
    "archive": table("exec= remote= output= prefix= format= add-file=", "o="),
    "push": table("receive-pack= exec= repo= push-option= force-with-lease=? set-upstream", "o="),
    "init": table(
        "template= separate-git-dir= initial-branch= object-format= shared=? bare quiet", "b= q"
    ),
    "fetch-pack": table("upload-pack= exec= depth=", ""),
    "send-pack": table("receive-pack= exec=", ""),
    # The program a daemon runs before serving each client (git daemon --access-hook=PROG).
    "daemon": table(
        "access-hook= base-path= interpolated-path= listen= port= user= group= pid-file= "
        "timeout= init-timeout= max-connections= enable= disable= allow-override= "
        "forbid-override= log-destination= verbose syslog inetd export-all detach reuseaddr "
        "strict-paths user-path=?",
        "",
    ),
}
_GIT_RUN_OPTS = ("-x", "--exec", "--open-files-in-pager", "-O", "--extcmd", "--tool-cmd",
                 "--httpd", "-d", "--browser", "-b", "--sendmail-cmd", "--to-cmd", "--cc-cmd",
                 "--header-cmd", "-u", "--upload-pack", "--receive-pack", "--access-hook",
                 # clone's and init's template folder: its hooks run at once (init.templateDir)
                 "--template")  # fmt: skip


def git_config_write(rest: Sequence[str]) -> tuple[str, str] | None:
    """The ``(key, value)`` that ``git config REST`` writes, or None for a read.

    Options are read as git reads them: ``-f FILE``/``--file=FILE`` take a value (so
    the key is the next word), ``set`` is the verb of the newer syntax, ``--add`` and
    ``--replace-all`` write too.
    """
    parsed = read_options(rest, _GIT_CONFIG)
    if parsed.has(*_GIT_CONFIG_READS):
        return None
    ops = list(parsed.operands)
    if ops[:1] == ["set"]:
        ops = ops[1:]
    elif ops and ops[0] in _GIT_CONFIG_VERBS:
        return None
    return (ops[0], ops[1]) if len(ops) >= 2 else None


_MF = frozenset({"MAKEFLAGS", "MFLAGS"})  # make's options in the environment: make reads them


def env_payloads(assignments: Sequence[str]) -> tuple[str, ...]:
    """Commands carried by ``NAME=VALUE`` words of COMMAND_VARIABLES."""
    out: list[str] = []
    for word in assignments:
        name, _, value = word.partition("=")
        # GIT_CONFIG_VALUE_7 as well as _0: git reads as many as GIT_CONFIG_COUNT says
        carries = name in COMMAND_VARIABLES or name.startswith("GIT_CONFIG_VALUE_") or name in _MF
        if carries and value.strip():
            out.append(f"make {value}" if name in _MF else value)
        elif name in _PROMPTS:  # PS4='$(cmd)': bash expands a prompt's substitutions
            out.extend(substitutions(value))
    return tuple(out)


def cron_commands(table: str) -> list[str]:
    """The command of each job of crontab text (``m h dom mon dow CMD``, ``@reboot CMD``)."""
    found: list[str] = []
    for line in table.splitlines():
        fields = line.split(None, 1 if line.lstrip().startswith("@") else 5)
        if not fields or fields[0].startswith("#") or ASSIGN.match(fields[0]):
            continue
        command = fields[-1] if len(fields) == (2 if fields[0].startswith("@") else 6) else ""
        command = re.split(r"(?<!\\)%", command, maxsplit=1)[0]  # % starts the job's stdin
        if command.strip():
            found.append(command)
    return found


# Prompts bash expands, substitutions and all (PS4 on each traced line under set -x).
_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS4"})
_BACKTICKED = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)


def substitutions(text: str) -> list[str]:
    """The bodies of the ``$(…)`` and backtick substitutions in ``text``."""
    return [m.group(1) for m in _BACKTICKED.finditer(text)] + dollar_parens(text)


def dollar_parens(piece: str) -> list[str]:
    """The bodies of the outermost ``$(…)`` in ``piece`` (a ``)`` of a nested one counted;
    one left open runs to the end)."""
    bodies: list[str] = []
    start = piece.find("$(")
    while start >= 0:
        depth, i = 1, start + 2
        while i < len(piece) and depth:
            depth += {"(": 1, ")": -1}.get(piece[i], 0)
            i += 1
        bodies.append(piece[start + 2 : i - 1 if depth == 0 else i])
        start = piece.find("$(", i)
    return bodies


def _git(args: Sequence[str]) -> NextStep:
    payloads: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-c" and i + 1 < len(args):
            key, _, value = args[i + 1].partition("=")
            found = git_config_payload(key, value)
            payloads.extend([found] if found else [])
        elif arg.startswith("--exec-path=") or arg.startswith("--upload-pack") or arg == "-u":
            pass  # reported by the allowlist table (docs/allowlist.md#options-that-run-programs)
        if arg in _GIT_GLOBAL_VALUE:
            i += 2
            continue
        if not arg.startswith("-"):
            break
        i += 1
    sub, rest = (args[i].lower(), list(args[i + 1 :])) if i < len(args) else ("", [])
    # An ext:: remote runs its command (clone 'ext::CMD', archive --remote=ext::CMD).
    for word in rest:
        url = word.partition("=")[2] if word.startswith("--") else word
        if url[:5].lower() == "ext::":
            payloads.append(url[5:].replace("%S", "git-upload-pack").replace("%s", "upload-pack"))
    if sub in _GIT_RUNS:  # rebase --exe=…, grep --open-files=…: abbreviations count
        options = read_options(rest, _GIT_RUNS[sub])
        payloads.extend(v for v in options.values(*_GIT_RUN_OPTS) if v)
        for setting in options.values("-c", "--config") if sub == "clone" else ():
            key, _, value = setting.partition("=")  # clone -c core.fsmonitor=CMD: as git -c
            found = git_config_payload(key, value)
            payloads.extend([found] if found else [])
        # send-email --smtp-server=/path runs that program as sendmail; a host name does not
        servers = options.values("--smtp-server") if sub == "send-email" else []
        payloads.extend(v for v in servers if v.startswith(("/", ".", "~", "$")))
    elif sub == "submodule" and rest[:1] == ["foreach"]:
        ops = [a for a in rest[1:] if not a.startswith("-")]
        payloads.extend([" ".join(ops)] if ops else [])
    elif sub == "bisect" and rest[:1] == ["run"] and len(rest) > 1:
        return NextStep(inner=tuple(rest[1:]), shell_payloads=tuple(payloads))
    elif sub == "config":
        written = git_config_write(rest)
        found = git_config_payload(*written) if written else None
        payloads.extend([found] if found else [])
    elif sub == "filter-branch":
        payloads.extend(
            rest[j + 1] for j, a in enumerate(rest[:-1]) if a.endswith("-filter") and a != "--"
        )
    elif sub == "filter-repo":  # --commit-callback CODE …: Python it runs, scanned as code
        code = [rest[j + 1] for j, a in enumerate(rest[:-1]) if a.endswith("-callback")]
        code += [a.partition("=")[2] for a in rest if a.partition("=")[0].endswith("-callback")]
        return NextStep(shell_payloads=tuple(payloads), scripts=tuple(code))
    return NextStep(shell_payloads=tuple(payloads))


def _parallel(args: Sequence[str], stdin: str | None) -> NextStep:
    k = operand_index(args, _PARALLEL_OPTS)
    rest, quoted = list(args[k:]), "-q" in args[:k] or "--quote" in args[:k]
    if ":::" in rest:
        cut = rest.index(":::")
        command, values = rest[:cut], [a for a in rest[cut + 1 :] if not a.startswith(":::")]
    else:
        command = rest
        values = [ln for ln in (stdin or "").splitlines() if ln.strip()]
    values = values[:_MAX_RUNS]
    if not command:  # each input is a command line of its own
        return NextStep(shell_payloads=tuple(values))
    text = shlex.join(command) if quoted else " ".join(command)  # -q: its words kept whole
    runs: list[str] = []
    for value in values:
        # each input quoted (sh -c runs it whole), or not (-q, --shellquote): both checked
        for v in (value, shlex.quote(value)):
            runs.append(text.replace("{}", v) if "{}" in text else f"{text} {v}")
    return NextStep(shell_payloads=tuple(runs or [text]))


def _tmux(args: Sequence[str]) -> NextStep:
    k = operand_index(args, _TMUX_OPTS)
    if k >= len(args) or args[k] not in _TMUX_RUNS:
        return NextStep()
    rest = args[k + 1 :]
    ops = rest[operand_index(rest, _TMUX_OPTS) :]
    # if-shell's first operand is the shell command; the ones after it are tmux's own
    words = (
        ops[:1] if args[k] in ("if-shell", "if") else [w for w in ops if w not in ("Enter", "C-m")]
    )
    return NextStep(shell_payloads=(" ".join(words),)) if words else NextStep()


def payload_step(
    prog: str, args: Sequence[str], redirects: Sequence[RedirectLike], stdin: str | None
) -> NextStep | None:
    """What a code-carrying builtin or program runs; None when ``prog`` is not one."""
    if prog in NAME_TAKERS:
        return names_step(prog, args)
    if prog == "trap":
        ops = [a for a in args if a != "--"]
        if ops and not ops[0].startswith("-") and len(ops) > 1:
            return NextStep(shell_payloads=(ops[0],))
        return NextStep()
    if prog == "alias":
        values = [a.partition("=")[2] for a in args if "=" in a and not a.startswith("-")]
        return NextStep(shell_payloads=tuple(v for v in values if v.strip()))
    if prog == "coproc":
        # "coproc { cmd; }", "coproc NAME { cmd; }": the grammar hands the braces over as words.
        sub = [a[1:-1] for a in args[:2] if a.startswith("(") and a.endswith(")") and len(a) > 1]
        if sub:  # "coproc (cmd)", "coproc NAME (cmd)": the grammar hands the subshell over whole
            return NextStep(shell_payloads=(sub[0],))
        body = list(args[1:] if args[:1] == ("{",) else args[2:] if args[1:2] == ("{",) else ())
        if body:
            while body and body[-1] in ("}", ";"):
                body.pop()
            return NextStep(shell_payloads=(shlex.join(body),)) if body else NextStep()
        return NextStep(inner=tuple(args)) if args else NextStep()
    if prog in ("source", "."):
        if args and args[0] in STDIN_FILES:
            fed = fed_text(redirects, stdin)
            return NextStep(shell_payloads=(fed,)) if fed else NextStep()
        return NextStep()
    if prog in ("at", "batch"):
        if option_value(args, "f", (), len(args)) is not None:
            return NextStep()
        fed = fed_text(redirects, stdin)
        return NextStep(shell_payloads=(fed,)) if fed else NextStep()
    if prog == "crontab":  # the jobs of a crontab installed from stdin
        fed = fed_text(redirects, stdin) if not {"-l", "-r"} & set(args) else None
        return NextStep(shell_payloads=tuple(cron_commands(fed))) if fed else NextStep()
    if prog == "parallel":
        return _parallel(args, fed_text(redirects, stdin))
    if prog == "sg":
        code = option_value(args, "c", (), len(args))
        ops = [a for a in args if not a.startswith("-")]
        if code is None and len(ops) > 1:
            code = " ".join(ops[1:])
        return NextStep(shell_payloads=(code,)) if code else NextStep()
    if prog in ("tmux", "byobu", "byobu-tmux"):  # byobu: tmux's (or screen's) front end
        return _tmux(args)
    if prog == "git":
        return _git(args)
    if prog in CARRYING and prog not in _WRAPPERS:
        found = carried(prog, args, fed_text(redirects, stdin))
        return NextStep(shell_payloads=found.payloads, scripts=found.scripts)
    return None
