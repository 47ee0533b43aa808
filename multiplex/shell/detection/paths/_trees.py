"""Commands that write a whole tree at once: archives extracted, repositories checked out
(docs/security.md, ``persistence``).

What such a command writes is not on the line: an archive's members, a repository's
files. Where it writes them is: the folder it extracts or clones into (a start-up place,
or a folder holding some: ``shell.detection.paths._startup_folders``), or, for an
archive extracted where its members' own paths say, anywhere. A pure leaf: stdlib and
the parsing leaves.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from multiplex.shell.parsing._argv import git_subcommand
from multiplex.shell.parsing.runs._git import GIT_GLOBAL_VALUE

__all__ = [
    "CHECKOUTS",
    "TREE_WRITERS",
    "UNPACKERS",
    "clones",
    "extracts_here",
    "git_folder",
    "unpacks_anywhere",
    "written_into",
]

UNPACKERS = frozenset(
    {"unzip", "tar", "gtar", "bsdtar", "7z", "7za", "7zz", "cpio", "bsdcpio", "rsync", "ditto",
     "unrar", "pax", "borg", "jar", "ar"}
)  # fmt: skip


def _short_flags(args: Sequence[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and a[1:2] != "-")


def _tar(args: Sequence[str]) -> tuple[str, list[str], bool]:
    """tar's short flags (its first word's bundle too), its long options, and whether it
    extracts."""
    bundle = args[0] if args and not args[0].startswith("-") else ""
    flags = bundle + _short_flags(args)
    longs = [a for a in args if a.startswith("--")]
    return (
        flags,
        longs,
        "x" in flags or any("--extract".startswith(a) or a == "--get" for a in longs),
    )


def _cpio_extracts(args: Sequence[str]) -> bool:
    """cpio's copy-in mode, not a listing of the archive."""
    flags = _short_flags(args)
    return ("i" in flags or "--extract" in args) and "t" not in flags and "--list" not in args


def unpacks_anywhere(prog: str, args: Sequence[str]) -> bool:
    """An archive extracted where its members' own paths say, absolute and ``..`` kept:
    ``tar -xPf``/``--absolute-names``, ``unzip -:``, ``7z x -spf``, GNU ``cpio -i`` (it
    keeps absolute names unless told ``--no-absolute-filenames``), ``bsdcpio -i
    --insecure``, ``pax -r`` (absolute names as the archive holds them), ``uudecode``
    without ``-o`` (the name its input's header says)."""
    if prog in ("tar", "gtar", "bsdtar"):
        flags, longs, extracts = _tar(args)
        return extracts and ("P" in flags or any(a.startswith("--abs") for a in longs))
    if prog in ("cpio", "bsdcpio"):
        kept = "--no-absolute-filenames" not in args if prog == "cpio" else "--insecure" in args
        return _cpio_extracts(args) and kept
    if prog == "pax":  # -r alone reads an archive; -rw copies files into a folder
        flags = _short_flags(args)
        return "r" in flags and "w" not in flags
    if prog == "unzip":
        return "-:" in args
    if prog == "uudecode":  # the file its input's header names, absolute or not
        return not any(a.startswith(("-o", "--o")) for a in args)
    return (
        prog in ("7z", "7za", "7zz")
        and args[:1] == ("x",)
        and any(a.startswith("-spf") for a in args)
    )


# The verbs that check a repository out into a folder, by program (git's: git_writes).
CHECKOUTS = {
    "hg": ("clone",),
    "svn": ("checkout", "co", "export"),
    "bzr": ("branch", "checkout", "co"),
    "brz": ("branch", "checkout", "co"),
    "gh": ("repo", "clone"),
    "glab": ("repo", "clone"),
}
# Tools that extract or restore a tree into a folder they are given, by program: the words
# or options that make them do it (none: any), the options whose value is the folder, and
# whether the folder is the word after the archive or source instead.
_EXTRACTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "dpkg-deb": (("-x", "--extract", "-X", "--vextract", "-R", "--raw-extract"), (), True),
    "dpkg": (("-x", "--extract", "-X", "--vextract"), (), True),
    "unsquashfs": ((), ("-d", "-dest"), False),
    "unar": ((), ("-o", "-output-directory"), False),
    "aunpack": ((), ("-X", "--extract-to"), False),
    "rclone": (("copy", "sync", "move", "copyto", "moveto"), (), True),
    "restic": (("restore",), ("-t", "--target"), False),
    "duplicity": (("restore",), (), True),
    "gem": (("unpack",), ("--target",), False),
    "cabextract": ((), ("-d", "--directory"), False),
    "arj": (("x", "e"), (), True),  # arj x A.arj DIR/
    "patch": ((), ("-d", "--directory"), False),  # the files its diff names, from DIR
}
TREE_WRITERS = frozenset({*CHECKOUTS, *_EXTRACTS, "lha"})


def _checked_out(prog: str, words: list[str]) -> list[str] | None:
    """The words after a checkout's verb (the repository first), or None for another verb."""
    verbs = CHECKOUTS[prog]
    if len(verbs) == 2:  # gh repo clone REPO [DIR]
        return words[2:] if words[:2] == list(verbs) else None
    return words[1:] if words[:1] and words[0] in verbs else None


def clones(prog: str, args: Sequence[str]) -> bool:
    """A whole tree written into a folder the line names: ``git clone URL DIR``, ``hg clone
    URL DIR``, ``svn checkout URL DIR``, ``dpkg-deb -x X.deb DIR``, ``rclone copy SRC DIR``,
    ``restic restore ID --target DIR``, ``wget -r -P DIR URL`` …"""
    if prog == "git":
        return git_subcommand(args)[0] == "clone"
    if prog == "wget":  # wget -r -P DIR URL
        return _mirrors(args)
    return bool(written_into(prog, args)) or (prog in CHECKOUTS and extracts_here(prog, args))


def git_folder(args: Sequence[str]) -> str | None:
    """The folder ``git -C DIR …`` runs in (each ``-C`` from the one before), or None."""
    folder = None
    for i, arg in enumerate(args[:-1]):
        if arg == "-C":
            folder = posixpath.join(folder, args[i + 1]) if folder else args[i + 1]
        elif not arg.startswith("-") and (i == 0 or args[i - 1] not in GIT_GLOBAL_VALUE):
            break  # the subcommand: a -C after it is its own option
    return folder


def written_into(prog: str, args: Sequence[str]) -> list[str]:
    """The folders ``prog ARGS`` (one of :data:`TREE_WRITERS`) may write a whole tree into.

    A folder given by position is every word after the repository, archive or source
    but options (an option's value among them: more folders asked about, none missed),
    up to a ``--``."""
    given = args[: args.index("--")] if "--" in args else args
    words = [a for a in given if not a.startswith("-")]
    if prog == "lha":  # lha xw=DIR A.lzh: its command letters, then w= and the folder
        return [args[0].partition("w=")[2]] if args and "w=" in args[0] else []
    if prog in CHECKOUTS:
        rest = _checked_out(prog, words)
        return rest[1:] if rest is not None else []
    if prog not in _EXTRACTS:
        return []
    verbs, options, positional = _EXTRACTS[prog]
    by_option = any(a in verbs for a in given if a[:1] == "-")  # dpkg-deb -x X.deb DIR
    at = next((i for i, w in enumerate(words) if w in verbs), -1)  # rclone copy SRC DIR
    if verbs and not by_option and at < 0:
        return []
    valued = tuple(o + "=" for o in options)
    found = [given[i + 1] for i, a in enumerate(given[:-1]) if a in options]
    found += [a.partition("=")[2] for a in given if valued and a.startswith(valued)]
    if positional:
        found += words[1:] if by_option else words[at + 2 :]
    return found


def extracts_here(prog: str, args: Sequence[str]) -> bool:
    """A tree written into the folder the command runs in, no other named: an archive
    extracted with no folder given (``tar -xf A``, ``unzip A``, ``7z x A``, ``cpio -i``,
    ``borg extract``, ``jar xf``, ``ar x``), a repository cloned with none (into a folder
    of its name there)."""
    if prog not in _HERE:  # (asked of every command of a line: most are none of these)
        return False
    words = [a for a in args if not a.startswith("-")]
    if prog in ("tar", "gtar", "bsdtar"):
        flags, longs, extracts = _tar(args)
        return extracts and "C" not in flags and not any(a.startswith("--dir") for a in longs)
    if prog == "unzip":  # not -l, -t, -p, -z (a listing, a test, to stdout, the comment)
        flags = _short_flags(args)
        return not any(a.startswith("-d") for a in args) and not set(flags) & set("ltpzZ")
    if prog in ("7z", "7za", "7zz", "unrar"):
        given = words[2:] if prog == "unrar" else []  # unrar x A.rar DIR/
        return (
            words[:1] in (["x"], ["e"]) and not given and not any(a.startswith("-o") for a in args)
        )
    if prog in ("cpio", "bsdcpio"):
        return _cpio_extracts(args)
    if prog == "git":  # git [-C DIR] clone URL: a folder of its name, there
        sub, rest = git_subcommand(args)
        if sub == "clone":
            return len([a for a in rest if not a.startswith("-")]) < 2
    if prog in CHECKOUTS:
        after = _checked_out(prog, words)
        return after is not None and len(after) < 2
    if prog == "borg":
        return "extract" in words[:1]
    if prog in ("jar", "ar"):
        return bool(args) and "x" in args[0].lstrip("-")  # jar xf A.jar, ar x A.a: the key letters
    return _here(prog, args, words)


# Options that name the folder a tree goes to, or make the command write none.
_ELSEWHERE = {
    "cabextract": ("-d", "--directory", "-l", "--list", "-t", "--test", "-p", "--pipe"),
    "unar": ("-o", "-output-directory", "--output-directory"),
    "aunpack": ("-X", "--extract-to", "-l", "--list"),
    "patch": ("-d", "--directory", "--dry-run", "-o", "--output"),
    "wget": ("-P", "--directory-prefix"),
}


def _here(prog: str, args: Sequence[str], words: list[str]) -> bool:
    """:func:`extracts_here` for the extractors, ``patch``, ``git apply`` and ``git am``
    and a recursive ``wget``, none of which names the files it writes."""
    if any(a.startswith(_ELSEWHERE.get(prog, ())) for a in args):
        return False
    flags = _short_flags(args)
    if prog == "lha":  # lha x A.lzh, lha -e A.lzh (no w=DIR)
        return bool(args) and args[0].lstrip("-")[:1] in ("x", "e") and "w=" not in args[0]
    if prog == "arj":  # arj x A.arj (no DIR after it)
        return words[:1] in (["x"], ["e"]) and len(words) < 3
    if prog == "cabextract":
        return not set(flags) & set("ltpd")
    if prog == "patch":  # patch -p1 < D (no file named: those of the diff, from here)
        return len(words) - sum(a in ("-i", "--input", "-p") for a in args) < 1
    if prog == "git":  # git apply D, git am M: the files the patches name, from here
        sub, rest = git_subcommand(args)
        if sub == "apply":
            return "--apply" in rest or not _CHECKS_ONLY.intersection(rest)
        return sub == "am" and not {"--abort", "--quit", "--show-current-patch"} & set(rest)
    if prog == "wget":  # wget -r -nH URL: the site's tree, from here
        return _mirrors(args)
    return prog in ("unar", "aunpack")


def _mirrors(args: Sequence[str]) -> bool:
    """wget's ``-r``/``--recursive`` or ``-m``/``--mirror``: a site's tree written."""
    return bool(set(_short_flags(args)) & set("rm")) or any(
        a in ("--recursive", "--mirror") for a in args
    )


# The programs extracts_here knows; any other writes no tree into its folder.
_HERE = frozenset(
    {"tar", "gtar", "bsdtar", "unzip", "7z", "7za", "7zz", "unrar", "cpio", "bsdcpio",
     "git", "borg", "jar", "ar", "lha", "arj", "cabextract", "unar", "aunpack", "patch",
     "wget", *CHECKOUTS}
)  # fmt: skip
_CHECKS_ONLY = frozenset({"--check", "--stat", "--numstat", "--summary", "--cached"})
