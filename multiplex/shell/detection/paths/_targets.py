"""Destructive targets resolved against the turn's cwd and homes (docs/security.md#resolved-targets).

A :class:`Place` carries the values the gate passes in: the turn's cwd, the
profile's homes (its ``HOME`` and its profile folder), the other served homes and
the folder holding the profiles. ``candidates`` lists what a target word may
become: ``~``/``$HOME`` become each home, ``$PWD``/``.`` the cwd, ``${V:-X}`` both
``V`` and ``X``, an unknown ``$V``/``$(…)`` the empty string (so ``$X/`` may be
``/``). Everything here is string and ``posixpath`` arithmetic: no file is
looked at. A pure leaf: stdlib and ``shell.detection._command_checks`` only.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from multiplex.shell.detection._command_checks import (
    CHMODS,
    catastrophic_path,
    expand_braces,
    is_block_device,
    operands,
    permission_operands,
    program,
    short_flags,
)
from multiplex.shell.parsing._argv import has_long, program_name
from multiplex.shell.parsing._getopt import read_options, table

if TYPE_CHECKING:
    from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand

__all__ = [
    "Place",
    "candidates",
    "destructive_targets",
    "device_at",
    "is_catastrophic",
    "may_destroy",
    "path_words",
    "placed",
]

_VAR = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+?]([^}]*)|(%%?|##?)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
    # any other form: ${V/a/b}, ${V:0:9}, ${V^^}, ${V@Q}, and ${!V} (the variable V names)
    r"|\$\{(!?)([A-Za-z_][A-Za-z0-9_]*)[^}]*\}"
)
# "$(dirname "$HOME")": the folder above a value the line shows (docs/security.md#resolved-targets).
_DIRNAME = re.compile(r"\$\(\s*dirname\s+([^()\s][^()]*)\)")
_HOME_WORD = re.compile(r"^~(?=/|$)")
_PWD_WORD = re.compile(r"~\+(?=/|$)")
_TRAILING = ("/*", "/.*", "/**", "/.", "/")
_MAX_CANDIDATES = 16
# What candidates() expands: $ ` { ~ or ".*" inside a word (literal alternatives: the engine
# skips to them), or a word that is "." or "..".
_EXPANDABLE = re.compile(r"\$|`|\{|~|\.\*")


@dataclass(frozen=True, slots=True)
class Place:
    """Where one turn's commands run (values passed in by the gate; nothing is read from disk).

    ``homes`` are the profile's own homes (``HOME`` of its commands, its profile
    folder); ``others`` every other served profile's home; ``profiles_dirs`` the
    folders holding profile homes (entering one outside one's own home is
    entering another profile's home).
    """

    cwd: str | None = None
    homes: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    profiles_dirs: tuple[str, ...] = ()
    _hash: int = field(init=False, repr=False, compare=False)
    normal_homes: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """``homes``, each through ``posixpath.normpath``: made once, not at each path resolved."""

    def __post_init__(self) -> None:
        # A Place keys each check's memo of a line, several times a decision: hashed once.
        hashed = hash((self.cwd, self.homes, self.others, self.profiles_dirs))
        object.__setattr__(self, "_hash", hashed)
        object.__setattr__(self, "normal_homes", tuple(map(posixpath.normpath, self.homes)))

    def __hash__(self) -> int:
        return self._hash

    def known(self, name: str) -> str | None:
        if name in ("HOME", "USERPROFILE"):
            return self.homes[0] if self.homes else "~"
        if name in ("PWD", "OLDPWD"):  # OLDPWD: the line's own moves aside, the cwd
            return self.cwd
        return None


def _clean(path: str) -> str:
    """normpath that keeps a trailing ``/*`` visible to the callers' trailing check."""
    if not path:
        return path
    norm = posixpath.normpath(re.sub(r"/+", "/", path))
    return "/" if norm == "//" else norm


def candidates(word: str, place: Place) -> tuple[list[str], bool]:
    """Plausible values of a target word, made absolute when the cwd is known, and
    whether the word is dynamic (its value is computed when the line runs)."""
    dynamic = "$" in word or "`" in word
    if word.startswith("//"):  # "//etc/shadow" is /etc/shadow (normpath keeps a leading //)
        word = "/" + word.lstrip("/")
    if word.startswith("/proc/") and (m := _PROC_VIEW.match(word)) is not None:
        word = _proc_view(m, word, place)
    if word not in (".", "..") and not _EXPANDABLE.search(word):  # only the cwd changes it
        if place.cwd and not word.startswith("/"):
            return [place.cwd.rstrip("/") + "/" + word if word else place.cwd], False
        return [word], False
    if place.cwd and _PWD_WORD.match(word):  # ~+ is $PWD
        word = place.cwd + word[2:]
    values = [_HOME_WORD.sub(place.homes[0], word)] if place.homes else [word]
    if "$" in word:
        values = _expand_vars(values[0], place)
    out: list[str] = []
    for value in values:
        for variant in expand_braces(value, _MAX_CANDIDATES) if "{" in value else [value]:
            if "$(pwd)" in variant and place.cwd:  # $(dirname "$(pwd)"): the cwd's parent
                variant = variant.replace("$(pwd)", place.cwd)
            if "$(" in variant and "dirname" in variant:
                variant = _DIRNAME.sub(lambda m: _dirname(m, place), variant)
            if "$(" in variant or "`" in variant:
                variant = re.sub(r"\$\([^)]*\)|`[^`]*`", "", variant)
            forms = [variant]
            if ".*" in variant.split("/"):  # bash < 5.2 expands ".*" to ".." too
                forms.append("/".join(".." if p == ".*" else p for p in variant.split("/")))
            for form in forms:
                if place.cwd and not form.startswith(("/", "~")):
                    form = posixpath.join(place.cwd, form) if form else place.cwd
                out.append("/" + form.lstrip("/") if form.startswith("//") else form)
    return out[:_MAX_CANDIDATES], dynamic


# A process's view of the filesystem: /proc/PID/root is its root (/ for every process
# here), the shell's own /proc/self/cwd its working folder.
_PROC_VIEW = re.compile(r"/proc/+([^/]+)/+(root|cwd)(?=/|$)")
_SELF = frozenset({"self", "thread-self", "$$", "$BASHPID", "${BASHPID}"})


def _proc_view(m: re.Match[str], word: str, place: Place) -> str:
    """``word`` with its ``/proc/PID/root`` or the shell's ``/proc/self/cwd`` replaced."""
    if m.group(2) == "root":
        return word[m.end() :] or "/"
    if m.group(1) in _SELF and place.cwd:
        return place.cwd + word[m.end() :]
    return word


def _expand_vars(word: str, place: Place) -> list[str]:
    results = [""]
    pos = 0
    for m in _VAR.finditer(word):
        literal = word[pos : m.start()]
        name = m.group(1) or m.group(5) or m.group(7)
        known = place.known(name)
        options = [known] if known is not None else [""]
        if m.group(7) is not None:
            # Derived from the value (a substitution that may change nothing, a part of it
            # down to "/"), or named indirectly (HOME among the names): fail closed.
            options = [*place.homes, ""] if m.group(6) else [known, "/"] if known else [""]
        elif m.group(2) is not None:  # ${V:-X}: V, or X when V is empty; X expanded too
            default = m.group(2)
            options.extend(_expand_vars(default, place) if "$" in default else [default])
        elif m.group(3) is not None:  # ${HOME%/*}: the value with a suffix or prefix cut
            # Of every home (HOME may be any of them); cut to nothing, the word may be "/".
            values = [*place.homes] if name in ("HOME", "USERPROFILE") and place.homes else [known]
            options = [_trim(v, m.group(3), m.group(4)) or "/" for v in values if v is not None]
            options = options or [""]
        results = [r + literal + o for r in results for o in options][:_MAX_CANDIDATES]
        pos = m.end()
    return [r + word[pos:] for r in results]


def _trim(value: str, op: str, pattern: str) -> str:
    """``${V%pat}``, ``${V%%pat}``, ``${V#pat}``, ``${V##pat}`` of a known value."""
    ends = range(len(value) + 1)
    if op.startswith("%"):  # a suffix: "%" the shortest, "%%" the longest
        for i in reversed(ends) if op == "%" else ends:
            if fnmatch.fnmatchcase(value[i:], pattern):
                return value[:i]
        return value
    for i in ends if op == "#" else reversed(ends):
        if fnmatch.fnmatchcase(value[:i], pattern):
            return value[i:]
    return value


def _dirname(match: re.Match[str], place: Place) -> str:
    arg = match.group(1).strip().strip("\"'")
    if place.homes:
        arg = _HOME_WORD.sub(place.homes[0], arg)
    if "$" in arg or "`" in arg:
        return ""
    return posixpath.dirname(arg.rstrip("/")) or "."


def _strip(path: str) -> str:
    while path != "/" and path.endswith(_TRAILING):
        path = path[: path.rfind("/")] or "/"
    return path


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def is_catastrophic(path: str, place: Place) -> bool:
    """``path`` is or may be /, a system directory, a home, or an ancestor of the cwd or a home."""
    if catastrophic_path(path):
        return True
    norm = _strip(_clean(path))
    if not norm.startswith("/"):
        # Unknown cwd: "..", "../.." are always ancestors of it; ".*" includes "..".
        parts = [p for p in norm.split("/") if p not in ("", ".")]
        return bool(parts) and all(p in ("..", ".*") for p in parts)
    for home in (*place.homes, *place.others):
        if _under(home, norm):  # the home itself or a folder above it
            return True
    return place.cwd is not None and norm != place.cwd and _under(place.cwd, norm)


def _find_roots(args: Sequence[str]) -> list[str]:
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!")) and arg not in ("-", "--"):
            break
        roots.append(arg)
    return roots or ["."]


_FIND_DESTROYERS = frozenset({"rm", "shred", "unlink", "rmdir", "mv", "chmod", "chown", "truncate"})


_DESTROYERS = frozenset(
    {"rm", "rmdir", "unlink", "srm", "shred", "wipe", "find", "rsync", "mv", "truncate", "pytest",
     "py.test", *CHMODS}
)  # fmt: skip
_PYTEST_BASETEMP = table(
    "basetemp= rootdir= confcutdir= junit-xml= junitxml= override-ini=", "o= c= p="
)


def may_destroy(program: str) -> bool:
    """:func:`destructive_targets` of an argv with this program (``SimpleCommand.program``)
    may yield something: a destructive verb, or python (``python -m pytest``)."""
    return program in _DESTROYERS or program.startswith("python")


def destructive_targets(argv: Sequence[str]) -> Iterator[str]:
    """The target words of a destructive verb (docs/security.md#resolved-targets)."""
    prog = program(argv)
    if prog.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        prog, argv = argv[2].lower(), argv[2:]  # python -m pytest --basetemp=…
    if prog not in _DESTROYERS:
        return
    args = list(argv[1:])
    if prog in ("pytest", "py.test"):  # pytest empties --basetemp before it writes there
        yield from read_options(args, _PYTEST_BASETEMP).values("--basetemp")
        return
    if prog in ("rm", "rmdir", "unlink", "srm", "shred", "wipe"):
        yield from operands(args)
    elif prog == "find":
        execs = [args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith(("-exec", "-ok"))]
        if "-delete" in args or any(program([e]) in _FIND_DESTROYERS for e in execs):
            yield from _find_roots(args)
    elif prog == "rsync":
        # --delete-after, --delete-excluded …: every rsync option that deletes starts so
        if any(a.startswith("--del") for a in args) or has_long(args, "remove-source-files"):
            ops = operands(args)
            yield from ops if has_long(args, "remove-source-files") else ops[-1:]
    elif prog == "mv":
        yield from operands(args)[:-1]
    elif prog in CHMODS and ("R" in short_flags(args) or has_long(args, "recursive")):
        yield from permission_operands(prog, args)[1]
    elif prog == "truncate":
        yield from operands([a for i, a in enumerate(args) if not _value_of(args, i, "-s")])


def _value_of(args: Sequence[str], index: int, option: str) -> bool:
    return index > 0 and args[index - 1] in (option, "--size")


def path_words(argv: Sequence[str]) -> Iterator[str]:
    """Words of an argv that may name a path (operands and ``--opt=VALUE`` values), and the
    path a word names for a tool that reads it: ``@F``, ``k=@F`` (curl, httpie, gh api),
    ``file://F`` (aws), ``FILE:F``/``OPEN:F`` (socat), git's ``REV:F``, sqlite3's
    ``readfile('F')``."""
    operands_named = (
        bool(argv) and argv[0].endswith("dd") and program_name(argv[0]) in _NAMED_OPERANDS
    )
    prog = program_name(argv[0]) if argv else ""
    for arg in argv[1:]:
        if arg.startswith("-"):
            if "=" in arg:
                value = arg.split("=", 1)[1]
                yield value
                yield from _named_file(value)
            continue
        yield arg
        yield from _named_file(arg)
        if operands_named and arg[:3] in ("if=", "of="):  # dd if=.env
            yield arg[3:]
        if prog == "git" and ":" in arg and "://" not in arg:  # git show HEAD:.env, :0:.env
            yield arg.split(":", 1)[1]
            yield arg.rsplit(":", 1)[1]
        elif prog in _SQL_READERS and ("file" in arg.lower() or "lo_import" in arg.lower()):
            yield from (a or b for a, b in _READFILE.findall(arg))


# SQL functions that read a file: sqlite3's readfile('F'), PostgreSQL's pg_read_file,
# pg_read_binary_file and lo_import, MySQL's load_file and LOAD DATA INFILE.
_SQL_READERS = frozenset({"sqlite3", "sqlite", "duckdb", "psql", "mysql", "mariadb"})
_READFILE = re.compile(
    r"(?i)(?:readfile|pg_read_(?:binary_)?file|lo_import|load_file)\s*\(\s*'([^']*)'"
    r"|infile\s+'([^']*)'"
)
# Programs whose operands name their files as KEY=PATH.
_NAMED_OPERANDS = frozenset({"dd", "dcfldd"})
_FILE_NAMED = re.compile(r"(?:^|=)@|^(?:fileb?://|(?:g?open|file|create):)", re.IGNORECASE)


def _named_file(word: str) -> Iterator[str]:
    if ("@" in word or ":" in word) and (m := _FILE_NAMED.search(word)) is not None:
        yield word[m.end() :].split(",", 1)[0].split(";", 1)[0]


def placed(parsed: ParsedLine, place: Place) -> Iterable[tuple[SimpleCommand, Place]]:
    """Each command with the place it runs in, following ``cd``/``pushd`` in the order the
    line runs them (primary commands; one that runs again after a ``cd`` is judged there too).

    Most lines hold no ``cd``: each command at ``place``. A line with one is followed
    once per place (several checks ask)."""
    for cmd in parsed.commands:
        if cmd.program in _MOVES:
            return parsed.once(("placed", place), lambda: tuple(_placed(parsed, place)))
    return zip(parsed.commands + parsed.variant_commands, itertools.repeat(place))


_MOVES = frozenset({"cd", "pushd"})
_KNOWN_ONLY = re.compile(r"(?:[^$`]|\$\{?(?:HOME|PWD|OLDPWD)\b\}?)*")


def _cdpath(cmd: SimpleCommand, cdpath: str) -> str:
    """CDPATH's first folder as the line sets it (``CDPATH=.. cd x``, ``export CDPATH=..``)."""
    words = [*cmd.assignments, *(cmd.argv[1:] if cmd.program in ("export", "declare") else ())]
    for word in words:
        if word.startswith("CDPATH="):
            first = word[7:].split(":", 1)[0].strip("'\"")
            cdpath = "" if first in ("", ".") else first
    return cdpath


def _placed(parsed: ParsedLine, place: Place) -> Iterator[tuple[SimpleCommand, Place]]:
    here = place
    cdpath = ""
    seen: set[tuple[int, Place]] = set()  # a command repeated at one place is judged once
    for cmd in parsed.sequence or parsed.commands:
        if (id(cmd), here) not in seen:
            seen.add((id(cmd), here))
            yield cmd, here
        cdpath = _cdpath(cmd, cdpath)
        if cmd.program in ("cd", "pushd"):
            ops = operands(cmd.argv[1:])
            word = ops[0] if ops else "~"
            if cdpath and not word.startswith(("/", "./", "../", "~", "$")) and word not in ".. .":
                word = cdpath + "/" + word  # searched in CDPATH first: its first folder
            values, dynamic = candidates(word, here)
            # A word of known variables only ($HOME, $PWD, $OLDPWD) is no less known.
            known = not dynamic or _KNOWN_ONLY.fullmatch(word) is not None
            cwd = values[0] if values and known and values[0].startswith("/") else None
            here = dataclasses.replace(here, cwd=posixpath.normpath(cwd) if cwd else None)
    for cmd in parsed.variant_commands:
        yield cmd, place


def device_at(word: str, cwd: str | None) -> bool:
    """``word`` names a block device as written, or, relative, from the folder ``cwd`` a
    command runs in: ``sda`` in /dev, ``dev/sda`` in /, ``../dev/sda`` from /tmp."""
    if word.startswith("/"):
        return word.startswith("/dev/") and is_block_device(word)
    if not cwd or not word or word[0] in "~$" or ("dev" not in word and "/dev" not in cwd):
        return False
    return is_block_device(posixpath.join(cwd, word))
