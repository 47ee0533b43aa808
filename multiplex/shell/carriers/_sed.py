"""What a sed script runs and writes (docs/allowlist.md#options-that-run-programs).

GNU sed runs a shell command with ``e CMD`` (and the pattern space with a bare
``e`` or the ``s///e`` flag) and writes files with ``w FILE``, ``W FILE`` and
``s///w FILE``, under any address (``1e``, ``$e``, ``/re/e``, ``1,$e``,
``0~1e``, ``1!e``) and inside ``{}`` blocks, after ``;`` or a newline. The script
is read command by command as sed reads it: addresses, ``!``, the arguments of
``s``, ``y``, ``a``/``i``/``c``, labels, file names (``r FILE``/``R FILE`` read one
into the output: a secret read like ``cat FILE``). Options are read with the
shared reader: ``-ne``, ``--expression=``, ``--file=``, ``-i``/``--in-pl``. A
script sed would refuse is judged as if every ``e``/``w`` in it ran.
A pure leaf: stdlib and ``shell.parsing._getopt``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from multiplex.shell.parsing._getopt import read_options, table

__all__ = ["SedFacts", "sed_facts"]

SED_OPTIONS = table(
    "expression= file= in-place=? line-length= null-data zero-terminated quiet silent "
    "regexp-extended separate unbuffered posix debug sandbox follow-symlinks help version "
    "binary",
    "e= f= i=? l= n r E s u z b",
)
_NO_ARGUMENT = frozenset("=dDgGhHlLnNpPxzF")
_TO_LINE_END = frozenset("aicwWrRe")  # their argument runs to the end of the line
_LABELLED = frozenset(":btTvqQ")
_BACKREFS = re.compile(r"\\[0-9]|(?<!\\)&")


@dataclass(frozen=True, slots=True)
class SedFacts:
    """What one sed invocation does beyond printing."""

    commands: tuple[str, ...] = ()  # shell commands of "e CMD"
    runs_text: bool = False  # bare "e" or "s///e": the pattern space runs as a command
    replaced: tuple[str, ...] = ()  # what s///e puts in the pattern space it runs
    writes: tuple[str, ...] = ()  # files of w/W and s///w
    in_place: bool = False
    script_file: bool = False  # -f FILE: a script the line does not show
    script_from_stdin: bool = False  # -f - (or /dev/stdin): what the line feeds it
    sandbox: bool = False
    files: tuple[str, ...] = ()  # the input files (edited in place with -i)
    reads: tuple[str, ...] = ()  # files of r/R, copied into the output


def _address(s: str, i: int) -> int:
    """Index after one address (``12``, ``$``, ``0~2``, ``/re/I``, ``\\cREc``, ``+3``, ``~4``)."""
    n = len(s)
    if i < n and s[i] in "+~":
        i += 1
    if i < n and s[i].isdigit():
        while i < n and (s[i].isdigit() or s[i] == "~"):
            i += 1
        return i
    if i < n and s[i] == "$":
        return i + 1
    if i < n and s[i] in "/\\":
        delim = s[i]
        if delim == "\\":
            i += 1
            delim = s[i] if i < n else "/"
        i = _delimited(s, i + 1, delim)
        while i < n and s[i] in "IM":
            i += 1
    return i


def _delimited(s: str, i: int, delim: str) -> int:
    """Index after the closing ``delim`` of a part starting at ``i`` (escapes skipped)."""
    n = len(s)
    while i < n and s[i] != delim:
        i += 2 if s[i] == "\\" else 1
    return i + 1


def _line_end(s: str, i: int) -> int:
    end = s.find("\n", i)
    return len(s) if end < 0 else end


def _parse(script: str) -> tuple[list[str], bool, list[str], list[str], list[str]]:
    replaced: list[str] = []
    commands: list[str] = []
    writes: list[str] = []
    reads: list[str] = []
    runs_text = False
    s, i, n = script, 0, len(script)
    while i < n:
        ch = s[i]
        if ch in " \t\n;}":
            i += 1
            continue
        if ch == "#":
            i = _line_end(s, i)
            continue
        start = i
        i = _address(s, i)
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == ",":
            i = _address(s, i + 1)
        while i < n and s[i] in " \t!":
            i += 1
        if i >= n:
            break
        cmd = s[i]
        i += 1
        if cmd == "{":
            continue
        if cmd in _NO_ARGUMENT:
            continue
        if cmd in _TO_LINE_END:
            end = _line_end(s, i)
            arg = s[i:end].lstrip(" \t")
            if cmd in "aic":
                while end < n and s[end - 1 : end] == "\\":  # a\ text continues on the next line
                    end = _line_end(s, end + 1)
            elif cmd == "e":
                arg = arg.removeprefix("\\").strip()
                if arg:
                    commands.append(arg)
                else:
                    runs_text = True
            elif cmd in "wW":
                writes.append(arg)
            elif cmd in "rR":
                reads.append(arg)
            i = end
        elif cmd in _LABELLED:
            while i < n and s[i] not in ";\n}":
                i += 1
        elif cmd in "sy":
            if i >= n:
                break
            delim = s[i]
            middle = _delimited(s, i + 1, delim)
            i = _delimited(s, middle, delim)
            replacement = s[middle : i - 1]
            if cmd == "s":
                while i < n and s[i] not in ";\n}#":
                    flag = s[i]
                    i += 1
                    if flag == "e":
                        runs_text = True
                        # What it runs, less what it takes from the line (& and \1-\9).
                        replaced.append(_BACKREFS.sub(" ", replacement))
                    elif flag == "w":
                        end = _line_end(s, i)
                        writes.append(s[i:end].strip())
                        i = end
        else:
            # sed refuses this script; judge what follows as if every e and w ran.
            rest = s[start:]
            return [*commands, rest], True, [*writes, rest], reads, replaced
    return commands, runs_text, writes, reads, replaced


@functools.lru_cache(maxsize=256)  # asked by the allowlist step, the unwrapper and the writes
def _facts(args: tuple[str, ...]) -> SedFacts:
    parsed = read_options(args, SED_OPTIONS)
    scripts = parsed.values("-e", "--expression")
    files = list(parsed.operands)
    script_file = parsed.has("-f", "--file")
    if not scripts and not script_file and files:
        scripts = [files.pop(0)]
    commands, runs_text, writes, reads, replaced = _parse("\n".join(scripts))
    return SedFacts(
        commands=tuple(commands),
        runs_text=runs_text,
        replaced=tuple(r for r in replaced if r.strip()),
        writes=tuple(w for w in writes if w and w not in ("/dev/stdout", "/dev/stderr")),
        in_place=parsed.has("-i", "--in-place"),
        script_file=script_file,
        script_from_stdin=bool({"-", "/dev/stdin"} & set(parsed.values("-f", "--file"))),
        sandbox=parsed.has("--sandbox"),
        files=tuple(files),
        reads=tuple(r for r in reads if r and r != "/dev/stdin"),
    )


def sed_facts(args: Sequence[str]) -> SedFacts:
    """What ``sed ARGS`` runs and writes."""
    return _facts(tuple(args))
