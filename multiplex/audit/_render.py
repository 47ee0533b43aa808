"""Render every registered surface for one scope, one surface at a time (docs/multiplexing.md#the-model, docs/audit.md).

The same as ``SURFACES.render_all(scope)``, except that a surface that raises
does not hide the others: its value becomes ``{"error": ...}`` and an
``IsolationViolation`` (strict mode) is kept with the file:line of the code
that tried to change process state.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import dataclass
from typing import Any

from multiplex._errors import IsolationViolation
from multiplex.scopes import SURFACES, ProfileScope, Surface

__all__ = ["Violation", "canonical", "render_surface", "render_surfaces"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB_OS = os.path.abspath(os.__file__)


@dataclass(frozen=True, slots=True)
class Violation:
    """A strict-mode isolation violation raised while resolving a surface."""

    profile: str
    surface: str
    target: str  # "os.environ" or "cwd"
    location: str
    message: str


def canonical(value: Any) -> str:
    """A stable text form of a rendered value (what equality means in the audit)."""
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _offending_frame(exc: BaseException) -> str:
    # The deepest frame outside os.py and multiplex.scopes (the hook itself):
    # that is the code which tried to write os.environ or chdir.
    frames = traceback.extract_tb(exc.__traceback__)
    scopes_dir = os.path.join(_PACKAGE, "scopes")
    for frame in reversed(frames):
        if frame.filename in ("<frozen os>", _STDLIB_OS):
            continue
        path = os.path.abspath(frame.filename)
        if path.startswith(scopes_dir):
            continue
        return f"{frame.filename}:{frame.lineno}"
    return "unknown"


def render_surface(surface: Surface, scope: ProfileScope) -> tuple[Any, Violation | None]:
    """One surface's rendered value for ``scope`` (errors become values)."""
    try:
        return _jsonable(surface.render(surface.resolve(scope))), None
    except IsolationViolation as exc:
        target = "os.environ" if "os.environ" in str(exc) else "cwd"
        violation = Violation(scope.name, surface.name, target, _offending_frame(exc), str(exc))
        return {"error": "IsolationViolation", "target": target}, violation
    except Exception as exc:  # a broken resolver is a finding, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}, None


def render_surfaces(
    scope: ProfileScope, *, yield_between: bool = False
) -> tuple[dict[str, Any], list[Violation]]:
    """Every registered surface for ``scope``; optionally yield the GIL between surfaces."""
    values: dict[str, Any] = {}
    violations: list[Violation] = []
    for surface in SURFACES:
        values[surface.name], violation = render_surface(surface, scope)
        if violation is not None:
            violations.append(violation)
        if yield_between:
            time.sleep(0)
    return values, violations
