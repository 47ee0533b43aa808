"""Programs that do what a coreutils command does, read as that command (docs/security.md#code-carriers).

``cmake -E rm -rf /`` removes what ``rm -rf /`` removes, ``gio copy x ~/.bashrc``
writes where ``cp x ~/.bashrc`` does and ``coreutils --coreutils-prog=rm`` *is*
rm. :func:`equivalent` gives the coreutils argv such a command performs, and the
gate checks it like one of the line's own (hardline, deny, allow, every danger):
so one rule about ``rm`` or ``~/.bashrc`` holds whatever tool spells the action.

The tools: CMake's command mode (``cmake -E``: ``rm``, ``remove``,
``remove_directory``, the ``copy`` family, ``rename``, ``touch``,
``make_directory``, ``create_symlink``/``create_hardlink``, ``tar``, ``cat`` and the
checksums; ``chdir DIR CMD`` runs ``CMD`` there), GLib's ``gio`` (``remove``,
``trash``, ``copy``, ``move``, ``rename``, ``mkdir``, ``save``, ``cat``), the Node
tools ``rimraf``, ``del``/``del-cli``, ``trash``/``trash-cli``/``trash-put`` and
``shx``, perl's ``-MExtUtils::Command -e rm_rf|rm_f|cp|mv|touch|chmod|mkpath`` (what
the Makefiles of Perl modules run), and the multi-call coreutils (``coreutils
--coreutils-prog=NAME``, uutils' ``coreutils NAME`` and ``uu-NAME``). A pure leaf: stdlib and ``shell.parsing._argv``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence

from multiplex.shell.parsing._argv import NextStep, positional

__all__ = ["EQUIVALENT_PROGRAMS", "archived_away", "equivalent", "is_equivalent", "rsync_removes"]

# cmake -E VERB: the coreutils argv it performs, its own arguments following.
_CMAKE = {
    "rm": ("rm",),
    "remove": ("rm", "-f"),
    "remove_directory": ("rm", "-rf"),
    "copy": ("cp",),
    "copy_if_different": ("cp",),
    "copy_if_newer": ("cp",),
    "copy_directory": ("cp", "-r"),
    "copy_directory_if_different": ("cp", "-r"),
    "copy_directory_if_newer": ("cp", "-r"),
    "rename": ("mv",),
    "touch": ("touch",),
    "touch_nocreate": ("touch", "-c"),
    "make_directory": ("mkdir", "-p"),
    "create_symlink": ("ln", "-s"),
    "create_hardlink": ("ln",),
    "tar": ("tar",),
    "cat": ("cat",),
    **{f"{s}sum": (f"{s}sum",) for s in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")},
}
# gio VERB: the same, for GLib's file tool (save writes its stdin to the file named).
_GIO = {
    "remove": ("rm", "-f"),
    "trash": ("rm", "-rf"),
    "copy": ("cp",),
    "move": ("mv",),
    "mkdir": ("mkdir",),
    "save": ("tee",),
    "cat": ("cat",),
}
# perl -MExtUtils::Command -e FUNC ARGS: the function of that name runs on ARGS.
_PERL_COMMANDS = {
    "rm_rf": ("rm", "-rf"),
    "rm_f": ("rm", "-f"),
    "touch": ("touch",),
    "cp": ("cp",),
    "mv": ("mv",),
    "chmod": ("chmod",),
    "mkpath": ("mkdir", "-p"),
}
# Node CLIs that remove what they are given, recursively.
_REMOVERS = frozenset({"rimraf", "del", "del-cli", "trash", "trash-cli", "trash-put"})
EQUIVALENT_PROGRAMS = frozenset({"cmake", "gio", "shx", "coreutils", "perl", *_REMOVERS})


def _operands(args: Sequence[str]) -> tuple[str, ...]:
    """The words that are not options (all of them after ``--``)."""
    if "--" in args:
        at = list(args).index("--")
        return (*(a for a in args[:at] if not a.startswith("-")), *args[at + 1 :])
    return tuple(a for a in args if not a.startswith("-") or a == "-")


def _gio_rename(args: Sequence[str]) -> tuple[str, ...] | None:
    """``gio rename FILE NAME``: FILE becomes NAME in its own folder."""
    words = _operands(args)
    if len(words) != 2:
        return None
    return ("mv", words[0], posixpath.join(posixpath.dirname(words[0]), words[1]))


def _cmake_chdir(args: Sequence[str]) -> NextStep | None:
    """``cmake -E chdir DIR CMD ARGS``: the command run in DIR, as a shell would."""
    if len(args) < 2:
        return None
    return NextStep(shell_payloads=(f"cd {shlex.quote(args[0])} && {shlex.join(args[1:])}",))


def _multi_call(prog: str, args: Sequence[str]) -> tuple[str, ...] | None:
    """The tool a multi-call coreutils runs: ``coreutils --coreutils-prog=rm ARGS``
    (GNU), ``coreutils rm ARGS`` (uutils), ``uu-rm ARGS``."""
    if prog.startswith("uu-") and len(prog) > 3:
        return (prog[3:], *args)
    if not args:
        return None
    first = args[0]
    if first.startswith("--coreutils-prog="):
        return (first.partition("=")[2], *args[1:])
    if first == "--coreutils-prog" and len(args) > 1:
        return (args[1], *args[2:])
    return None if first.startswith("-") else tuple(args)


_PERL_CODE = re.compile(r"-[lnpawsWtTcSX0-9]*[eE]")


def _perl_command(args: Sequence[str]) -> NextStep | None:
    """``perl -MExtUtils::Command -e rm_rf -- DIR``: ExtUtils' rm_rf on its arguments, and
    the code of every ``-e``/``-E`` still read as perl's own (``-e rm_rf -e 'system …'``)."""
    words = list(args)
    module = any(
        w.startswith("-MExtUtils::Command")
        or (w == "-M" and words[i + 1 : i + 2] == ["ExtUtils::Command"])
        for i, w in enumerate(words)
    )
    if not module:
        return None
    code: list[str] = []
    end = 0
    for i, word in enumerate(words):
        cluster = _PERL_CODE.match(word)
        if cluster:  # -e CODE, -eCODE, -le CODE (a cluster of switches ending in e)
            value = word[cluster.end() :] or (words[i + 1] if i + 1 < len(words) else "")
            code.append(value)
            end = i + (1 if word[cluster.end() :] else 2)
    called = [c.strip().removesuffix("()").removesuffix(";").strip() for c in code]
    spelled = next((_PERL_COMMANDS[c] for c in called if c in _PERL_COMMANDS), None)
    if spelled is None:
        return None
    rest = words[end:]
    inner = (*spelled, *(rest[1:] if rest[:1] == ["--"] else rest))
    return NextStep(inner=inner, scripts=tuple(code))


def equivalent(prog: str, args: Sequence[str]) -> NextStep | None:
    """The coreutils command ``prog ARGS`` performs, or None when it is none of these."""
    inner: tuple[str, ...] | None = None
    if prog == "cmake" and args[:1] == ("-E",) and len(args) > 1:
        if args[1] == "chdir":
            return _cmake_chdir(args[2:])
        spelled = _CMAKE.get(args[1])
        inner = None if spelled is None else (*spelled, *args[2:])
    elif prog == "gio" and args:
        if args[0] == "rename":
            inner = _gio_rename(args[1:])
        elif (spelled := _GIO.get(args[0])) is not None:
            inner = (*spelled, *args[1:])
    elif prog in _REMOVERS:
        words = _operands(args)
        inner = ("rm", "-rf", *words) if words else None
    elif prog == "shx":  # shx [--silent …] CMD ARGS: the shelljs command of that name
        at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
        inner = None if at is None else tuple(args[at:])
    elif prog == "perl":
        return _perl_command(args)
    elif prog == "coreutils" or prog.startswith("uu-"):
        inner = _multi_call(prog, args)
    return NextStep(inner=inner) if inner else None


_RSYNC_DELETES = ("--del", "--delete", "--delete-before", "--delete-during", "--delete-delay",
                  "--delete-after", "--delete-excluded", "--delete-missing-args")  # fmt: skip
_RSYNC_VALUES = frozenset({"-e", "--rsh", "--rsync-path", "-f", "--filter", "--exclude",
                           "--include", "--exclude-from", "--include-from", "--files-from",
                           "-T", "--temp-dir", "--log-file", "--partial-dir", "-B",
                           "--block-size", "--chmod", "--chown", "--backup-dir", "--timeout",
                           "--contimeout", "--port", "--bwlimit", "--max-size", "--min-size",
                           "--max-delete", "--modify-window", "--compress-level", "--zl",
                           "--compress-choice", "--zc", "--checksum-choice", "--cc",
                           "--skip-compress", "--log-file-format", "--out-format",
                           "--password-file", "--sockopts", "--outbuf", "--iconv",
                           "--remote-option", "-M", "--usermap", "--groupmap", "--copy-dest",
                           "--compare-dest", "--link-dest", "--suffix", "--info", "--debug",
                           "--stop-after", "--stop-at", "--address", "--protocol",
                           "--write-batch", "--read-batch", "--only-write-batch",
                           "--early-input", "--max-alloc", "--mkpath-mode", "--copy-as"})  # fmt: skip


def rsync_removes(args: Sequence[str]) -> str | None:
    """``rsync --delete SRC/ DEST``: the local folder whose files SRC does not hold are
    removed, as by ``rm -rf`` (``rsync -a --delete empty/ ~/`` empties the home); None
    without ``--delete``, for another host's folder or a folder inside the project."""
    if not any(a in _RSYNC_DELETES for a in args):
        return None
    words = positional(args, _RSYNC_VALUES)
    dest = words[-1] if len(words) > 1 else None
    if dest is None or _REMOTE.match(dest):
        return None
    # A folder of the project mirrored (rsync -a --delete src/ backup/) stays a copy
    # (docs/security.md); one beyond it, or the working folder itself, is emptied.
    plain = posixpath.normpath(dest)
    beyond = dest.startswith(("/", "~", "$")) or plain == "." or plain.startswith("..")
    return dest if beyond else None


_REMOTE = re.compile(r"^(?:rsync://|[^/:]+:)")  # host:path, user@host:path, rsync://

# zip's options that take the next word, and those that take the rest of the line (lists).
_ZIP_VALUES = frozenset({"-b", "-n", "-t", "-tt", "-P", "-O", "-s", "-sp", "-Z", "-ds", "-FS"})
_ZIP_LISTS = frozenset({"-x", "-i", "--exclude", "--include"})


def archived_away(prog: str, args: Sequence[str]) -> tuple[str, ...]:
    """The files an archiver removes once it has put them in the archive: ``zip -m`` (also
    in a bundle, ``-rm``; ``--move``) and 7-Zip's ``-sdel``; () for any other run."""
    if prog in ("7z", "7za", "7zr"):
        if "-sdel" not in args:
            return ()
        return tuple([a for a in args if not a.startswith("-")][2:])  # 7z a ARCHIVE FILES…
    if prog != "zip":
        return ()
    moves = "--move" in args or any(
        a[:1] == "-" and a[1:2] != "-" and "m" in a[1:] and a not in _ZIP_VALUES for a in args
    )
    if not moves:
        return ()
    # The lists of -x and -i run to the end of the line: their patterns are no files.
    ends = [k for k, a in enumerate(args) if a in _ZIP_LISTS]
    return tuple(positional(args[: ends[0]] if ends else args, _ZIP_VALUES)[1:])  # ZIPFILE FILES…


def is_equivalent(prog: str) -> bool:
    """Whether :func:`equivalent` may read ``prog`` (uutils' ``uu-NAME`` by its prefix)."""
    return prog in EQUIVALENT_PROGRAMS or prog.startswith("uu-")
