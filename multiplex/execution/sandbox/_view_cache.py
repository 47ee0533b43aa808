"""A profile's sandbox view, computed once and kept while its paths are unchanged (docs/execution.md#the-sandbox).

Which host folders a command's sandbox binds, hides or blanks depends on the
profile's config and on what those paths are at that moment: where each
resolves (links followed), what it is, whether it exists. ``view_binds``
computes it at a profile's first command and keeps it with a print of every
path it looked at: the path the kernel resolves it to (``/proc/self/fd``),
its device, inode and mode. Each later command takes the prints again and
uses the kept view only when all are the same (one open and readlink per
folder the paths are in, then an ``fstatat`` per entry that is not a link:
the folder's resolution plus the name is the entry's; a link takes a full
print of its own), so a path that became a link since, a folder that appeared (a
home's ``logs/runs``) or one replaced by another is computed anew: a kept
view never binds what a fresh one would not. A reload that changes the
config is another key. A path that cannot be printed (no ``/proc``, no
permission) is computed every time, as before. The hidden paths (every home,
the same list for each profile) are printed once a command and their prints
kept once for all profiles: among thousands of homes that is one print each,
not a resolve in Python and a comparison with every other hidden path.
"""

from __future__ import annotations

import collections
import os
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex.execution.sandbox._root_view import runtime_paths, system_roots
from multiplex.execution.sandbox._sandbox_binds import (
    Writable,
    hidden_binds,
    own_home_hides,
    read_paths,
    writable_binds,
)

if TYPE_CHECKING:
    from multiplex.scopes import ProfileScope

__all__ = ["ViewBinds", "view_binds"]

_KEPT = 4096  # views (profile configs); the least recently used goes first
# What own_home_hides looks at in the home, besides the credential sources.
_HOME_ENTRIES = ("", "/..", "/.env", "/credentials", "/.multiplex-state", "/config.yaml")
_HOME_ENTRIES_MORE = ("/logs", "/logs/runs", "/cache", "/workspace")


@dataclass(frozen=True, slots=True)
class ViewBinds:
    """One profile's view beyond the system's: each path at its real location."""

    home: Path  # real
    writable: Writable
    read: tuple[Path, ...]
    hides: tuple[str, ...]  # bwrap arguments: other homes, profiles folders, the config
    home_hides: tuple[str, ...]  # bwrap arguments: the own home's secrets, config, logs


class _Unverifiable(Exception):
    """A path whose print cannot be taken: the view is computed, not kept."""


_Print = tuple[str, int, int, int] | None


def _print(path: str) -> _Print:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _Unverifiable from exc
    try:
        info = os.fstat(fd)
        return os.readlink(f"/proc/self/fd/{fd}"), info.st_dev, info.st_ino, info.st_mode
    except OSError as exc:
        raise _Unverifiable from exc
    finally:
        os.close(fd)


def _prints(paths: Sequence[str]) -> tuple[_Print, ...]:
    """``_print`` of each path, with one full print per folder they are in.

    An entry that is not a link resolves to where its folder resolves plus
    its name: one ``fstatat`` in the folder (a link is not followed) tells
    it, without an open, a path walk and a readlink of its own. A link,
    ``..`` or a folder that cannot be opened takes the full print.
    """
    folders: dict[str, tuple[int, str] | None] = {}
    try:
        return tuple(_print_in(folders, path) for path in paths)
    finally:
        for entry in folders.values():
            if entry is not None:
                os.close(entry[0])


def _print_in(folders: dict[str, tuple[int, str] | None], path: str) -> _Print:
    head, _, name = path.rpartition("/")
    if not head or name in ("", ".", ".."):
        return _print(path)
    if head not in folders:
        folders[head] = _folder(head)
    folder = folders[head]
    if folder is None:
        return _print(path)
    fd, resolved = folder
    try:  # fstatat: mounts are crossed, a link is not followed
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _Unverifiable from exc
    if stat.S_ISLNK(info.st_mode):
        return _print(path)
    return resolved.rstrip("/") + "/" + name, info.st_dev, info.st_ino, info.st_mode


def _folder(path: str) -> tuple[int, str] | None:
    """An O_PATH fd of ``path`` and where the kernel resolves it, or None (not a folder we can use)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        resolved = ""
    if not resolved.startswith("/") or resolved.endswith(" (deleted)"):
        os.close(fd)
        return None
    return fd, resolved


def _probed(scope: ProfileScope) -> tuple[str, ...]:
    """Every path of its own the computation of ``scope``'s view looks at (as it names them)."""
    home = str(scope.home)
    paths = [home + entry for entry in (*_HOME_ENTRIES, *_HOME_ENTRIES_MORE)]
    if scope.cwd is not None:
        paths.append(str(scope.cwd))
    for item in scope.view.terminal.writable_paths:
        paths.append(os.path.join(home, os.path.expanduser(item)))  # an absolute one stays
    paths += (os.path.abspath(item) for item in scope.view.terminal.read_paths)
    paths += (str(mount.source) for mount in scope.credential_mounts)
    return tuple(paths)


def _compute(scope: ProfileScope, hidden: Sequence[Path]) -> ViewBinds:
    home = Path(os.path.realpath(scope.home))
    writable = writable_binds(scope)
    read = tuple(read_paths(scope.view.terminal.read_paths))
    shown = [*system_roots(), *runtime_paths(), *writable.outside_home, *read]
    return ViewBinds(
        home,
        writable,
        read,
        tuple(hidden_binds(home, hidden, shown)),
        tuple(own_home_hides(scope, home, writable.inside_home)),
    )


_lock = threading.Lock()
_Prints = tuple[_Print, ...]
# Per profile: the prints of its own paths and of the hidden ones, and its view.
_kept: collections.OrderedDict[object, tuple[_Prints, _Prints, ViewBinds]] = (
    collections.OrderedDict()
)
# The hidden paths (every home: the same list for each profile) and their last
# prints, one object shared by every kept view: thousands of homes, one copy.
_hidden: dict[tuple[Path, ...], _Prints] = {}


def _hidden_prints(hidden: tuple[Path, ...]) -> _Prints:
    prints = _prints([str(path) for path in hidden])
    with _lock:
        last = _hidden.get(hidden)
        if last is None:  # another list (a reload): no kept view was made with it
            _hidden.clear()
            _kept.clear()
        elif last == prints:
            return last
        _hidden[hidden] = prints
        return prints


def view_binds(scope: ProfileScope, hidden: Sequence[Path]) -> ViewBinds:
    """``scope``'s view as it is now: the kept one if every path it looked at is unchanged."""
    terminal = scope.view.terminal
    hidden = tuple(hidden)
    key = (
        str(scope.home),
        None if scope.cwd is None else str(scope.cwd),
        tuple(terminal.writable_paths),
        tuple(terminal.read_paths),
        tuple(str(mount.source) for mount in scope.credential_mounts),
    )
    probed = _probed(scope)
    try:
        before = _prints(probed)
        hidden_before = _hidden_prints(hidden)
    except _Unverifiable:
        return _compute(scope, hidden)
    with _lock:
        kept = _kept.get(key)
        if kept is not None and kept[0] == before and kept[1] == hidden_before:
            _kept.move_to_end(key)
            return kept[2]
    view = _compute(scope, hidden)
    try:  # kept only when nothing changed while it was computed (it may make cache/, workspace/)
        if _prints(probed) != before:
            return view
        if _hidden_prints(hidden) != hidden_before:
            return view
    except _Unverifiable:
        return view
    with _lock:
        _kept[key] = (before, hidden_before, view)
        _kept.move_to_end(key)
        while len(_kept) > _KEPT:
            _kept.popitem(last=False)
    return view
