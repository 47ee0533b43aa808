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
    # input (the process cwd included, since a relative path is made absolute with it).
    here = _process_cwd()
    return _place(scope.name, scope.home, scope.env.get("HOME"), scope.cwd, served, here)


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
    served: tuple[tuple[str, Path], ...],
    _process_cwd: str,
) -> Place:
    own_home = _norm(home)
    homes = tuple(dict.fromkeys([_norm(env_home)] if env_home else []) | {own_home: None})
    cwd = _norm(cwd_path) if cwd_path is not None else None
    others: list[str] = []
    folders: list[str] = []
    for served_name, served_home in served:
        path = _norm(served_home)
        if served_name == "":
            if own_home.startswith(path + os.sep):  # the folder above one's own home
                folders.append(path)
        elif served_name != name and path != own_home:
            others.append(path)
    return Place(cwd=cwd, homes=homes, others=tuple(others), profiles_dirs=tuple(folders))
