"""Builtins and programs that carry code in their arguments or environment (docs/approvals.md#parsing).

``payload_step`` says what ``trap``, ``alias``, ``coproc``, ``source``/``.``,
``at``/``batch``, ``parallel``, ``sg``, ``tmux`` and ``git`` (``runs/_git.py``) run;
``env_payloads`` reads the variables whose value a program runs as a command (``GIT_PAGER``,
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
from multiplex.shell.parsing._names import NAME_TAKERS, names_step
from multiplex.shell.parsing.runs._git import git_step

__all__ = [
    "COMMAND_VARIABLES",
    "PAYLOAD_PROGRAMS",
    "STDIN_FILES",
    "TOOLCHAIN_VARIABLES",
    "cron_commands",
    "dollar_parens",
    "env_payloads",
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
        return git_step(args)
    if prog in CARRYING and prog not in _WRAPPERS:
        found = carried(prog, args, fed_text(redirects, stdin))
        return NextStep(shell_payloads=found.payloads, scripts=found.scripts)
    return None
