"""The homes in a ``profiles_dir``, found in one directory read (docs/configuration.md#supervisor-config-multiplexyaml)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from multiplex.profiles._child import child

__all__ = ["homes_in", "name_problem"]

_NO_FOLDER = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def homes_in(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every folder of ``root`` (or link to one) holding a config.yaml, by name, sorted.

    One directory read: a real folder's type comes with its entry (no stat), and
    its path, under the resolved ``root``, is resolved already; a link is
    followed as ``Path.is_dir`` does and resolved by its profile.
    """
    try:
        with os.scandir(root) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError as exc:
        if exc.errno in _NO_FOLDER:
            return {}  # as Path.is_dir: no such folder, or a link loop
        raise
    homes: dict[str, tuple[Path, bool]] = {}
    for entry in entries:
        link = entry.is_symlink()
        if not (Path(entry.path).is_dir() if link else entry.is_dir(follow_symlinks=False)):
            continue
        # lexists: a dangling config.yaml link is a home in error, never skipped.
        if os.path.lexists(entry.path + "/config.yaml"):
            homes[entry.name] = (child(root, entry.name), not link)
    return homes


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a profile, or None: it names a folder and shows in every
    listing, so no path separator, no leading dot, no blank or control character at all
    and no space at its ends (``"default "`` would list as ``default``)."""
    if not name.strip():
        return "a profile name must not be empty"
    if "/" in name or "\\" in name or name.startswith("."):
        return f"invalid profile name {name!r}: no path separators, no leading dot"
    if name != name.strip() or any(not ch.isprintable() for ch in name):
        return f"invalid profile name {name!r}: no space at its ends, no control character"
    return None
