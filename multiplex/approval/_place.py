"""The :class:`~multiplex.shell.Place` a turn's commands are judged at (docs/security.md#resolved-targets).

The turn's cwd, its homes (the ``HOME`` its commands get and the profile
folder), every other served home and the profiles folder: plain strings handed
to the pure analysis in ``multiplex.shell``. Nothing here reads a file.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from multiplex.scopes import ProfileScope
from multiplex.shell import Place

__all__ = ["place_of"]


def _norm(path: Path | str) -> str:
    return os.path.normpath(os.path.abspath(str(path)))


def place_of(scope: ProfileScope, served: tuple[tuple[str, Path], ...]) -> Place:
    """Where ``scope``'s commands run and which homes are not theirs."""
    # Asked on every decision with the same few values: computed once per distinct
    # input. The process cwd is part of it only when some path is relative (abspath
    # takes it then); the served homes are told apart by identity (the supervisor
    # hands out the same tuple until they change), not hashed anew each time.
    # A turn asks with its own (immutable) scope at each decision: the last answer is
    # kept by identity, unless a relative path made it depend on the process cwd.
    global _last_place
    last = _last_place  # one read: another thread may replace it meanwhile
    if last[0] is scope and last[1] is served:
        return last[2]
    homes = _homes_of(served)
    env_home = scope.env.get("HOME")
    home, cwd = scope.home, scope.cwd
    relative = (
        not homes.absolute
        or not home.is_absolute()
        or (env_home is not None and not env_home.startswith("/"))
        or (cwd is not None and not cwd.is_absolute())
    )
    here = _process_cwd() if relative else ""
    place = _place(scope.name, home, env_home, cwd, homes, here)
    if not relative:
        _last_place = (scope, served, place)
    return place


_last_place: tuple[object, object, Place] = (None, None, Place())


class _Served:
    """The served homes, hashed and compared by identity in ``_place``'s cache key."""

    __slots__ = ("absolute", "served")

    def __init__(self, served: tuple[tuple[str, Path], ...]) -> None:
        self.served = served
        self.absolute = all(Path(path).is_absolute() for _, path in served)


_last_served = _Served(())


def _homes_of(served: tuple[tuple[str, Path], ...]) -> _Served:
    global _last_served
    last = _last_served  # one read: another thread may replace it meanwhile
    if last.served is not served:
        last = _last_served = _Served(served)
    return last


def _process_cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # removed: only a relative path needs it, and _norm then raises as before
        return ""


@functools.lru_cache(maxsize=256)
def _place(
    name: str,
    home: Path,
    env_home: str | None,
    cwd_path: Path | None,
    homes: _Served,
    _process_cwd: str,
) -> Place:
    own_home = _norm(home)
    homes_ = tuple(dict.fromkeys([_norm(env_home)] if env_home else []) | {own_home: None})
    cwd = _norm(cwd_path) if cwd_path is not None else None
    others: list[str] = []
    folders: list[str] = []
    for served_name, served_home in homes.served:
        path = _norm(served_home)
        if served_name == "":
            if own_home.startswith(path + os.sep):  # the folder above one's own home
                folders.append(path)
        elif served_name != name and path != own_home:
            others.append(path)
    return Place(cwd=cwd, homes=homes_, others=tuple(others), profiles_dirs=tuple(folders))
