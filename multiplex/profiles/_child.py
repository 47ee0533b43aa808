"""A path's child by one name, made without parsing the name again.

``home / "config.yaml"`` parses its argument as a path (splits it, looks for a
root) every time; loading 10,000 homes made five such paths a home. A name of
one component needs none of that: pathlib's own directory walk joins it with
``_make_child_relpath``, used here where it exists. The path is the one ``/``
makes (tested).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["child"]

_JOIN = getattr(Path, "_make_child_relpath", None)


def child(path: Path, name: str) -> Path:
    """``path / name`` for ``name`` one component: no separator, not empty, ``.`` or ``..``."""
    if _JOIN is None or not name or "/" in name or name in (".", ".."):
        return path / name
    joined: Path = _JOIN(path, name)
    return joined
