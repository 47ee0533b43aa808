"""The approval gate (SPEC §7).

The pure leaves (``rules``, ``shell``, ``detection``) import nothing else of
the package; import them directly. ``Gate`` and its parts are re-exported here
lazily so that importing a leaf does not pull in the whole gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiplex.approval._gate import Gate

__all__ = ["Gate"]


def __getattr__(name: str) -> Any:
    if name == "Gate":
        from multiplex.approval import _surfaces  # noqa: F401  (registers surfaces)
        from multiplex.approval._gate import Gate

        return Gate
    raise AttributeError(name)
