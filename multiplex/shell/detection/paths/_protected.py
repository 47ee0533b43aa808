"""Writes to protected files (docs/approvals.md#protected-files).

``find_protected_write`` matches the writes of a line (``_writes.write_targets``
and the paths inline code writes) against ``approvals.protected_files``. A pure
leaf: stdlib and the shell leaves it imports.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Sequence

from multiplex.shell.detection._catalogue import PROTECTED_FILE, Finding
from multiplex.shell.detection._command_checks import expand_braces
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.detection.paths._writes import (
    all_commands,
    evidence,
    moved_writes,
    script_writes,
    write_targets,
)
from multiplex.shell.parsing._parsed import ParsedLine

__all__ = ["find_protected_write", "protected_globs"]


@functools.lru_cache(maxsize=64)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # One regex for all globs: fnmatchcase(name, p) is translate(p) matched at the start.
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def protected_globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """The protected ``patterns`` as one regex: its ``match`` is ``fnmatchcase`` of any."""
    return _globs(patterns)


def _protected(path: str, patterns: Sequence[str]) -> bool:
    path = path.strip()
    if not path:
        return False
    norm = posixpath.normpath(path)
    base = norm.rsplit("/", 1)[-1]
    globs = _globs(tuple(patterns))
    if any(globs.match(name) is not None for name in (base, norm, path)):
        return True
    # A glob written to (perl -pi -e … *, sed -i … *.md) reaches a protected file its last
    # component matches (a protected glob stands for the names it matches: ".env*" for .env).
    if "*" in base or "?" in base or "[" in base:
        return any(fnmatch.fnmatchcase(_example(p), base) for p in patterns)
    return False


def _example(pattern: str) -> str:
    """A name the protected glob ``pattern`` matches (its last component, wildcards filled)."""
    name = pattern.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"\[[^\]]*\]", "x", name).replace("*", "").replace("?", "x") or "x"


def find_protected_write(
    parsed: ParsedLine, protected: Sequence[str], place: Place | None = None
) -> Finding | None:
    """A write to a path matching one of the ``protected`` globs (docs/approvals.md#protected-files), or None.

    A glob matches the basename or the path; writes are output redirections, ``tee``,
    ``cp``/``mv``/``install``/``ln`` destinations, ``sed -i``/``perl -i`` files,
    ``truncate``, ``dd of=``, ``chmod``/``chown`` targets, deletes and editors. A path
    named from where a ``cd`` took the command is also matched as the path from the
    turn's folder (``cd .github && cp x workflows/ci.yml`` writes
    ``.github/workflows/ci.yml``).
    """
    if not protected:
        return None
    for cmd in all_commands(parsed):
        for path in write_targets(cmd):
            for variant in expand_braces(path):
                if _protected(variant, protected):
                    return Finding(PROTECTED_FILE, evidence(cmd))
    for payload in parsed.script_payloads:
        if any(_protected(literal, protected) for literal in script_writes(payload)):
            return Finding(PROTECTED_FILE, payload)
    start = place.cwd if place is not None else None
    for cmd, path in moved_writes(parsed, place) if place is not None and start else ():
        moved = posixpath.relpath(path, start)  # as named from the turn's folder
        if not moved.startswith("../") and _protected(moved, protected):
            return Finding(PROTECTED_FILE, evidence(cmd))
    return None
