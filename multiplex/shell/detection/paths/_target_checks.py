"""Destructive targets, kernel triggers and other profiles' homes, judged against a :class:`Place`.

``find_target_hardline`` (hardline): a destructive verb whose target is or may be
/, a system directory, a home, or an ancestor of the cwd or of a home; a write to
/proc/sysrq-trigger; wiping a block device. ``find_dynamic_target`` (dangerous): a
destructive verb whose target is computed at run time. ``find_other_home``
(blocked): any path word or redirection that resolves into another served
profile's home or into the profiles folder outside one's own home
(docs/security.md#resolved-targets, docs/security.md#another-profiles-home).
``cd``/``pushd`` earlier in the line move the cwd the later commands are judged in.
A pure leaf: stdlib, ``shell.detection._targets``, ``shell.detection._writes``.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator

from multiplex.shell.carriers._options import OPTION_RISKS
from multiplex.shell.carriers._tool_code import CODE_PROGRAMS, XARGS_OPTIONS
from multiplex.shell.detection._catalogue import (
    BLOCK_DEVICE_WRITE,
    DELETE_SYSTEM,
    DYNAMIC_TARGET,
    OTHER_HOME,
    SCRIPT_EXEC,
    SYSRQ,
    SYSTEM_TARGET,
    Finding,
)
from multiplex.shell.detection._command_checks import CHMODS, operands
from multiplex.shell.detection.paths._targets import (
    Place,
    candidates,
    destructive_targets,
    device_at,
    is_catastrophic,
    may_destroy,
    path_words,
    placed,
)
from multiplex.shell.detection.paths._writes import all_commands, evidence, write_targets
from multiplex.shell.parsing._getopt import read_options
from multiplex.shell.parsing._parsed import ParsedLine

__all__ = [
    "each_dynamic_target",
    "each_target_hardline",
    "each_unseen_arguments",
    "each_unseen_xargs",
    "find_dynamic_target",
    "find_other_home",
    "find_target_hardline",
]

# A word may leave the cwd when it starts with / or ~ or holds "..", $ ` * ? [ or {: those
# inside a word as literal alternatives (the engine then skips to them).
_INNER_ESCAPES = re.compile(r"\.\.|\$|`|\*|\?|\[|\{")


def _any_escapes(joined: str) -> bool:
    """Some word of ``joined`` (words joined by newlines) may leave the cwd."""
    if joined.startswith(("/", "~")) or "\n/" in joined or "\n~" in joined:
        return True
    return _INNER_ESCAPES.search(joined) is not None


_DELETERS = frozenset({"rm", "rmdir", "unlink", "srm", "find", "rsync", "shred", "wipe"})
_SYSRQ = frozenset({"/proc/sysrq-trigger", "/proc/sys/kernel/sysrq"})
# Programs that erase a block device named as an operand (listing options excepted).
_WIPERS = frozenset({"wipefs", "blkdiscard", "mkswap", "sgdisk", "sfdisk", "zpool", "badblocks"})
_READ_ONLY = frozenset({"-n", "--no-act", "-l", "--list", "-p", "--print", "--help", "-V"})
# parted's commands that drop a device's partitions (the table, one, or its end).
_PARTED_DROPS = frozenset({"mklabel", "mktable", "rm", "resizepart"})
# Interactive partitioners: a script fed to one on a device ends in "w" in every use.
_FED_PARTITIONERS = frozenset({"fdisk", "gdisk", "cgdisk"})


def each_target_hardline(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each destructive command whose target is or may be catastrophic."""
    for cmd, here in placed(parsed, place):
        cwd = here.cwd
        for target in write_targets(cmd):
            # Also named from the folder it runs in: cd /proc && echo b > sysrq-trigger,
            # cd /dev && cat /dev/zero > sda (an absolute device: _detection's own check).
            at = (
                posixpath.join(cwd, target) if cwd and target[:1] not in ("/", "~", "$") else target
            )
            if posixpath.normpath(at or ".") in _SYSRQ:
                yield Finding(SYSRQ, evidence(cmd), cmd.text)
            elif at is not target and cmd.program not in CHMODS and device_at(target, cwd):
                yield Finding(BLOCK_DEVICE_WRITE, evidence(cmd), cmd.text)
        if not cmd.argv:
            continue
        for word in destructive_targets(cmd.argv) if may_destroy(cmd.program) else ():
            values, _dynamic = candidates(word, here)
            if any(is_catastrophic(v, here) for v in values):
                deletes = cmd.program in _DELETERS
                yield Finding(DELETE_SYSTEM if deletes else SYSTEM_TARGET, evidence(cmd), cmd.text)
        prog, args = cmd.program, cmd.argv[1:]
        wipes = prog in _WIPERS and not _READ_ONLY & set(args)
        wipes = wipes or (prog == "parted" and not _PARTED_DROPS.isdisjoint(args))
        fed = cmd.upstream or any(r.op.startswith("<") for r in cmd.redirects)
        wipes = wipes or (prog in _FED_PARTITIONERS and bool(fed) and not _READ_ONLY & set(args))
        if wipes and any(device_at(op, cwd) for op in operands(args)):
            yield Finding(BLOCK_DEVICE_WRITE, evidence(cmd), cmd.text)


def find_target_hardline(parsed: ParsedLine, place: Place) -> Finding | None:
    """The first destructive command whose target is or may be catastrophic, or None."""
    # Asked at step 2 and again inside detection: once per decision.
    return parsed.once(
        ("target_hardline", place), lambda: next(each_target_hardline(parsed, place), None)
    )


def each_dynamic_target(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each destructive command with a target computed at run time."""
    for cmd in all_commands(parsed):
        if not cmd.argv or not may_destroy(cmd.program):
            continue
        for word in destructive_targets(cmd.argv):
            if candidates(word, place)[1] or ("*" in word and word.startswith(("/", "~"))):
                yield Finding(DYNAMIC_TARGET, evidence(cmd), cmd.text)


# Upstream stages whose output the line shows: the parser hands their text to xargs.
_LITERAL_SOURCES = frozenset({"echo", "printf"})


_STDIN_OPS = frozenset({"<", "<>", "<&"})


def each_unseen_xargs(parsed: ParsedLine) -> Iterator[Finding]:
    """Each xargs whose arguments the line does not show (piped from a file or a program,
    read from ``< FILE`` or ``-a FILE``) handed to a destructive program (its targets are
    computed at run time) or to one whose options run code (``cat args | xargs git``)."""
    for cmd in all_commands(parsed):
        if cmd.program != "xargs" or any(r.op.startswith("<<") for r in cmd.redirects):
            continue
        options = read_options(cmd.argv[1:], XARGS_OPTIONS, permute=False)
        if not options.operands or options.has("-I", "-i", "--replace"):
            continue  # nothing to run, or each item in a place of the command (judged there)
        # Standard input from a file or another descriptor; an output redirection feeds nothing.
        fed = any(r.op.lstrip("0") in _STDIN_OPS for r in cmd.redirects)
        fed = fed or options.has("-a", "--arg-file")
        if not fed and not (cmd.upstream and set(cmd.upstream) - _LITERAL_SOURCES):
            continue
        if not fed and set(cmd.upstream) == {"find"} and options.has("-0", "--null"):
            continue  # find -print0 | xargs -0: every item starts with find's start path
        inner = options.operands[0].rpartition("/")[2].lower()
        if may_destroy(inner):
            yield Finding(DYNAMIC_TARGET, evidence(cmd), cmd.text)
        elif inner in CODE_PROGRAMS:
            yield Finding(SCRIPT_EXEC, evidence(cmd), cmd.text)


# Programs whose output a line cannot steer into options: each prints in its own format.
_FORMATTED = frozenset(
    {"date", "nproc", "pwd", "whoami", "id", "hostname", "uname", "basename", "dirname",
     "realpath", "readlink", "git", "which", "command", "getconf", "arch", "logname", "mktemp",
     "seq", "wc", "uuidgen", "tty", "printenv"}
)  # fmt: skip


def each_unseen_arguments(parsed: ParsedLine) -> Iterator[Finding]:
    """Each program with options that run code or write files given words a substitution
    computes at run time, where they may be such options: ``git $(cat args.txt)`` (the file
    may hold ``-c core.fsmonitor=CMD status``), ``find . $(cat x)``, ``node "$(cat x)"``.
    Not after ``--``, nor from programs that print in their own format (``$(date +%F)``)."""
    for cmd in all_commands(parsed):
        if (
            not cmd.argv
            or cmd.program not in OPTION_RISKS
            or not ("$(" in cmd.text or "`" in cmd.text)
        ):
            continue
        for inner, quoted, before in _whole_substitutions(cmd.text):
            if " -- " in before + " " or inner.split()[:1] == []:
                continue
            program = inner.split()[0].rpartition("/")[2]
            first_argument = before.strip() == cmd.text.split(maxsplit=1)[0]
            if program not in _FORMATTED and (not quoted or first_argument):
                yield Finding(SCRIPT_EXEC, evidence(cmd), cmd.text)
                break


def _whole_substitutions(text: str) -> Iterator[tuple[str, bool, str]]:
    """Each command substitution of ``text`` (outside single quotes) that is a whole word,
    bare or double-quoted: its command, whether quoted, and the text before it."""
    quote = ""
    i, size = 0, len(text)
    while i < size:
        ch = text[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif ch == "'" and not quote:
            quote = "'"
        elif ch == '"':
            quote = "" if quote == '"' else '"'
        elif ch in "$`" and text.startswith(("$(", "`"), i) and not text.startswith("$((", i):
            close = _closing(text, i)
            quoted = quote == '"' and text[i - 1 : i] == '"' and text[close : close + 1] == '"'
            start = i - 1 if quoted else i
            end = close + 1 if quoted else close
            whole = (start == 0 or text[start - 1] in " \t") and text[end : end + 1] in (
                "",
                " ",
                "\t",
                ";",
                "&",
                "|",
                ")",
            )
            if whole and close > i:
                inner = text[i + 2 : close - 1] if ch == "$" else text[i + 1 : close - 1]
                yield inner.strip(), quoted, text[:start]
            i = max(i + 1, close)
            continue
        i += 1


def _closing(text: str, at: int) -> int:
    """The index just past the substitution starting at ``at`` (``$(`` nested, or a backtick)."""
    if text[at] == "`":
        end = text.find("`", at + 1)
        return end + 1 if end > 0 else len(text)
    depth, i = 0, at + 1
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def find_dynamic_target(parsed: ParsedLine, place: Place) -> Finding | None:
    """The first destructive command with a target computed at run time, or None."""
    return next(each_dynamic_target(parsed, place), None)


@functools.lru_cache(maxsize=64)  # one place per turn, asked on every decision
def _home_set(place: Place) -> tuple[frozenset[str], tuple[str, ...]]:
    own = tuple(posixpath.normpath(h) for h in place.homes if h.startswith("/"))
    return frozenset(posixpath.normpath(o) for o in place.others), own


def _enters_other(path: str, others: frozenset[str], own: tuple[str, ...], place: Place) -> bool:
    if not path.startswith("/"):
        return False
    norm = posixpath.normpath(path)
    for h in own:  # a loop, not any(): most paths are under one's own home, and any()
        if norm == h or norm.startswith(h + "/"):  # closing its generator early costs more
            return False
    probe = norm
    while True:  # the path or one of its ancestors is another profile's home
        if probe in others:
            return True
        parent = posixpath.dirname(probe)
        if parent == probe:
            break
        probe = parent
    for root in place.profiles_dirs:
        root = posixpath.normpath(root)
        if norm == root or norm.startswith(root + "/"):
            return True
    return False


def find_other_home(parsed: ParsedLine, place: Place) -> Finding | None:
    """A path word or redirection that resolves into another profile's home, or None.

    The finding's evidence never names the other profile: it is the bare cause.
    """
    if not place.others and not place.profiles_dirs:
        return None
    others, own = _home_set(place)
    last: Place | None = None
    cwd_safe = False
    links: dict[str, str] = {}  # symbolic links the line makes: where each points
    for cmd, here in placed(parsed, place):
        if here is not last:  # the place changes only at a cd
            # A plain relative word stays under the cwd: only an unsafe cwd makes it count.
            # Without a cwd it stays relative (candidates gives the word itself), and only
            # an absolute path can enter a home.
            cwd_safe = here.cwd is None or not _enters_other(here.cwd, others, own, here)
            last = here
        words = [r.target for r in cmd.redirects if not r.op.startswith("<<")]
        words += list(path_words(cmd.argv)) if cmd.argv else []
        if cwd_safe and not _any_escapes("\n".join(words)):
            continue  # one search for the whole command: no word can leave the cwd
        for word in words:
            if not word or word.startswith("&"):
                continue
            if cwd_safe and not word.startswith(("/", "~")) and not _INNER_ESCAPES.search(word):
                continue
            values, _ = candidates(word, here)
            if links:  # ln -s .. u && cat u/../bob/x: through the link, not past its name
                values = [_through(v, links) for v in values]
            if any(_enters_other(v, others, own, here) for v in values):
                return Finding(OTHER_HOME, "another profile's home")
        if cmd.program == "ln" and cmd.argv:
            _made_link(cmd.argv[1:], here, links)
    return None


def _made_link(args: tuple[str, ...], here: Place, links: dict[str, str]) -> None:
    """Record the symbolic link ``ln -s TARGET [NAME]`` makes, by absolute name."""
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if "s" not in flags and "--symbolic" not in args:
        return
    ops = operands(list(args))
    if not ops or len(ops) > 2:
        return
    target = ops[0]
    name = ops[1] if len(ops) == 2 else posixpath.basename(target.rstrip("/"))
    if posixpath.basename(name.rstrip("/")) in ("", ".", ".."):
        return  # no link is made by that name (ln fails, or makes one inside the folder)
    named, _ = candidates(name, here)
    if not named or not named[0].startswith("/"):
        return
    at = posixpath.normpath(named[0])
    if target.startswith("/"):
        links[at] = posixpath.normpath(target)
    else:
        links[at] = posixpath.normpath(posixpath.join(posixpath.dirname(at), target))


def _through(value: str, links: dict[str, str]) -> str:
    """``value`` with a leading link the line made replaced by where it points."""
    while "/./" in value or "//" in value:
        value = value.replace("/./", "/").replace("//", "/")
    for name, target in links.items():
        if value.startswith(name + "/"):
            return target + value[len(name) :]
    return value
