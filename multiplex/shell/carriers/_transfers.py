"""File-transfer clients' own command languages: the shell commands their commands run.

``sftp`` (a batch ``-b FILE``, or its standard input), ``lftp`` (``-c``/``-e``
commands, ``-f FILE``, ``--rcfile``, its standard input) and ``ftp`` (its
standard input) each run a local shell command for ``!cmd``; lftp also for
``source -e cmd`` (it runs what ``cmd`` prints as its own commands) and a
``set …connect-program CMD``. Commands read from a file are not seen: such a
call is never vouched for by an allow rule (docs/allowlist.md). Each command
line is read once, left to right (docs/security.md#linear-time). A pure leaf:
stdlib, ``shell.parsing._getopt`` and the other carriers' readers.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from multiplex.shell.carriers._consoles import scp_code
from multiplex.shell.carriers._runners import Carried, carried_of
from multiplex.shell.parsing._getopt import read_options, table

__all__ = ["ftp_code", "lftp_code", "reads_piped_commands", "sftp_code"]

_STDIN = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_SFTP = table("", "B= b= c= D= F= i= J= l= o= P= R= S= s= X=")
_LFTP = table("rcfile= norc help version env-password", "c= e= f= p= u= d v")
_LLS = re.compile(r"lls(?![\w.-])")
# lftp separates commands with ";", "&", "&&", "||" and newlines.
_LFTP_SPLIT = re.compile(r"[;&|\n]+")


def _bang(line: str) -> tuple[bool, str | None]:
    """``!cmd`` (``!`` alone: a shell): whether it runs one, and the command."""
    if not line.startswith("!"):
        return False, None
    return True, line[1:].strip() or None


def sftp_code(args: Sequence[str], fed: str | None) -> Carried:
    """sftp's batch commands: ``!cmd``, and ``lls ARGS`` (run as ``ls ARGS`` by a shell);
    a ``-`` or ``@`` before a command is a flag."""
    found = scp_code(args, fed)  # -S/-D PROG and -o ProxyCommand, as scp's
    parsed = read_options(args, _SFTP)
    batch = parsed.values("-b")
    unknown = found.unknown
    lines: list[str] = []
    if batch and not _STDIN.issuperset(batch):
        unknown = unknown or "sftp -b batchfile"
    elif fed is not None:
        lines = fed.splitlines()
    payloads = list(found.payloads)
    runs = found.runs
    for line in lines:
        text = line.strip().lstrip("-@").lstrip()
        if _LLS.match(text):  # OpenSSH hands "ls ARGS" to a shell: a line judged as ours
            payloads.append("ls" + text[3:])
            continue
        shell, command = _bang(text)
        if shell:
            runs = runs or "sftp runs a local shell command"
            payloads += [command] if command else []
    return carried_of(payloads, runs, unknown)


def lftp_code(args: Sequence[str], fed: str | None) -> Carried:
    """lftp's ``-c``/``-e`` commands (or those fed on its standard input)."""
    parsed = read_options(args, _LFTP)
    scripts = parsed.values("-c", "-e")
    if fed is not None and not parsed.has("-c", "-f"):
        scripts.append(fed)
    unknown = "lftp -f script" if parsed.has("-f", "--rcfile") else None
    payloads: list[str] = []
    runs: str | None = None
    for line in (line for script in scripts for line in script.splitlines()):
        for start in _starts(line):
            command = line[start:].lstrip()
            ran, source_file = _lftp_command(command)
            if ran is not None:
                runs = "lftp runs a local shell command"
                payloads.append(_unquoted(ran))
                break  # the rest of the line is the shell's
            if source_file:
                unknown = unknown or "lftp source script"
    return carried_of(payloads, runs, unknown)


def _starts(line: str) -> list[int]:
    """Where each lftp command of ``line`` may start: its start, and after each
    separator (``;``, ``&``, ``|``: quoting aside, so one too many, never one too few)."""
    return [0, *(m.end() for m in _LFTP_SPLIT.finditer(line))]


def _unquoted(text: str) -> str:
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _lftp_command(command: str) -> tuple[str | None, bool]:
    """The shell command an lftp command runs (``!CMD``, ``source -e CMD``, ``set
    …connect-program CMD``), and whether it reads commands from a file (``source F``)."""
    if command.startswith("!"):
        return command[1:], False
    words = command.split(None, 2)
    if not words:
        return None, False
    if words[0] == "source":
        if len(words) > 1 and words[1] == "-e":
            return (words[2] if len(words) > 2 else ""), False
        return None, len(words) > 1
    if words[0] == "set" and len(words) > 2:
        name = words[1].lstrip("-").split("/", 1)[0]
        if name.endswith(("connect-program", ":shell")):
            return words[2], False
    return None, False


def ftp_code(args: Sequence[str], fed: str | None) -> Carried:
    """ftp's commands, read from its standard input: ``!cmd`` runs a local shell command."""
    if fed is None:
        return Carried(unknown="ftp reads its commands from standard input")
    payloads: list[str] = []
    runs = None
    for line in fed.splitlines():
        shell, command = _bang(line.strip())
        if shell:
            runs = "ftp runs a local shell command"
            payloads += [command] if command else []
    return carried_of(payloads, runs)


# vi's family: in Ex mode (-e, -E, as ex) they read Ex commands from standard input.
_VI_FAMILY = frozenset({"vi", "vim", "nvim", "view", "gvim", "vimdiff", "rvim", "rview"})


def reads_piped_commands(prog: str, args: Sequence[str]) -> bool:
    """Whether ``prog ARGS`` takes its commands from its standard input (a pipe's,
    which the line does not show): ``ed``, ``ex`` and vim in Ex mode (``vim -es``),
    vim's typed keys from it (``vim -s /dev/stdin``), ``ftp``, ``sftp`` without a
    batch file, ``lftp`` without ``-c`` or ``-f``."""
    if prog in ("ed", "ftp", "ex"):
        return True
    if prog in _VI_FAMILY:
        shorts = [a for a in args if a.startswith("-") and not a.startswith("--")]
        if any(set(a[1:2]) & {"e", "E"} for a in shorts):
            return True  # -e, -E, -es, -Es: Ex mode
        return any(a == "-s" and b in _STDIN for a, b in itertools.pairwise(args))
    if prog == "sftp":
        batch = read_options(args, _SFTP).values("-b")
        return not batch or _STDIN.issuperset(batch)
    return prog == "lftp" and not read_options(args, _LFTP).has("-c", "-f")
