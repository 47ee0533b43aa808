"""The :class:`~multiplex.shell.Place` a turn's commands are judged at (docs/security.md#resolved-targets).

The turn's cwd, its homes (the ``HOME`` its commands get and the profile
folder), every other served home and the profiles folder: plain strings handed
to the pure analysis in ``multiplex.shell``. Nothing here reads a file.
"""

from __future__ import annotations

import os
from pathlib import Path

from multiplex.scopes import ProfileScope
from multiplex.shell import Place

__all__ = ["place_of"]


def _norm(path: Path | str) -> str:
    return os.path.normpath(os.path.abspath(str(path)))


def place_of(scope: ProfileScope, served: tuple[tuple[str, Path], ...]) -> Place:
    """Where ``scope``'s commands run and which homes are not theirs."""
    own_home = _norm(scope.home)
    env_home = scope.env.get("HOME")
    homes = tuple(dict.fromkeys([_norm(env_home)] if env_home else []) | {own_home: None})
    cwd = _norm(scope.cwd) if scope.cwd is not None else None
    others: list[str] = []
    folders: list[str] = []
    for name, home in served:
        path = _norm(home)
        if name == "":
            if own_home.startswith(path + os.sep):  # the folder above one's own home
                folders.append(path)
        elif name != scope.name and path != own_home:
            others.append(path)
    return Place(cwd=cwd, homes=homes, others=tuple(others), profiles_dirs=tuple(folders))
