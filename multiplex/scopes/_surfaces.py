"""The surface registry: every per-profile thing a turn can reach (docs/multiplexing.md#the-model, docs/audit.md).

A surface has a name, a resolver (cheap: returns the live value or object for a
scope) and a renderer (a JSON-able description the audit compares between a
multiplexed turn and a standalone process). ``owns`` lists the resource-key
prefixes on the Profile object that the surface accounts for: a per-profile
resource no surface owns is a defect the test-suite catches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter, methodcaller
from typing import Any

from multiplex.scopes._caches import CACHES_KEY, ProfileCaches
from multiplex.scopes._scope import ProfileScope

__all__ = ["SURFACES", "Surface", "SurfaceRegistry", "register_surface", "resource_of"]


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class Surface:
    """One scoped surface: how to reach it from a scope and how to show it."""

    name: str
    resolve: Callable[[ProfileScope], Any]
    render: Callable[[Any], Any] = _identity
    description: str = ""
    owns: tuple[str, ...] = ()


class SurfaceRegistry:
    """An ordered registry of surfaces (definitions only: no per-profile state)."""

    def __init__(self) -> None:
        self._surfaces: dict[str, Surface] = {}
        self._lock = threading.Lock()

    def register(self, surface: Surface) -> Surface:
        with self._lock:
            self._surfaces[surface.name] = surface
        return surface

    def unregister(self, name: str) -> Surface | None:
        """Remove a surface (extensions and tests that registered their own)."""
        with self._lock:
            return self._surfaces.pop(name, None)

    def snapshot(self) -> dict[str, Surface]:
        """The registry's current contents, for :meth:`restore`."""
        with self._lock:
            return dict(self._surfaces)

    def restore(self, saved: dict[str, Surface]) -> None:
        """Put back what :meth:`snapshot` returned (tests that inject surfaces)."""
        with self._lock:
            self._surfaces.clear()
            self._surfaces.update(saved)

    def __iter__(self) -> Iterator[Surface]:
        return iter(tuple(self._surfaces.values()))

    def __len__(self) -> int:
        return len(self._surfaces)

    def __getitem__(self, name: str) -> Surface:
        return self._surfaces[name]

    def names(self) -> tuple[str, ...]:
        return tuple(self._surfaces)

    def resolve_all(self, scope: ProfileScope) -> dict[str, Any]:
        """Every surface's live value for ``scope``."""
        return {s.name: s.resolve(scope) for s in self._surfaces.values()}

    def render_all(self, scope: ProfileScope) -> dict[str, Any]:
        """Every surface as JSON-able data (what the audit compares)."""
        return {s.name: s.render(s.resolve(scope)) for s in self._surfaces.values()}

    def owner_of(self, resource_key: str) -> Surface | None:
        """The surface that accounts for a Profile resource key, if any."""
        for surface in self._surfaces.values():
            if any(resource_key.startswith(prefix) for prefix in surface.owns):
                return surface
        return None


SURFACES = SurfaceRegistry()


def register_surface(
    name: str,
    resolve: Callable[[ProfileScope], Any],
    *,
    render: Callable[[Any], Any] = _identity,
    description: str = "",
    owns: tuple[str, ...] = (),
) -> Surface:
    """Add a surface to the registry (the audit picks it up with no other change)."""
    return SURFACES.register(Surface(name, resolve, render, description, owns))


def resource_of(key: str) -> Callable[[ProfileScope], Any]:
    """A resolver: the scope's profile resource under ``key`` if it was created, else None.

    Only the layer that owns ``key`` creates it, so its type is that layer's
    (a C call: no Python frame on a turn's path).
    """
    return methodcaller("get_resource", key)


def _text(value: Any) -> Any:
    return None if value is None else str(value)


def _render_caches(caches: ProfileCaches | None) -> dict[str, Any]:
    if caches is None:
        return {}
    return {name: {"home": str(c.home), "size": len(c)} for name, c in sorted(caches.all().items())}


def _register_builtins() -> None:
    reg = register_surface
    reg("home", attrgetter("home"), render=_text, description="the profile home")
    reg("epoch", attrgetter("epoch"), description="config epoch of the turn")
    reg("cwd", attrgetter("cwd"), render=_text, description="working directory of commands")
    reg(
        "env",
        attrgetter("env"),
        render=lambda e: dict(sorted(e.items())),
        description="command environment",
    )
    reg("backend", attrgetter("backend"), description="terminal backend")
    reg("redact_secrets", attrgetter("redact_secrets"), description="redaction switch")
    reg(
        "credential_mounts",
        attrgetter("credential_mounts"),
        render=lambda ms: [{"source": str(m.source), "target": m.target} for m in ms],
        description="credential mount plan",
    )
    reg(
        "allowlist",
        attrgetter("allowlist"),
        render=lambda st: sorted(st.rules()),
        description="permanent allowlist (live store)",
    )
    reg("deny", attrgetter("deny"), render=list, description="deny rules")
    reg("approval_mode", attrgetter("approval_mode"), description="approvals.mode")
    reg("unattended", attrgetter("unattended"), description="approvals.unattended")
    reg("approval_timeout", attrgetter("approval_timeout"), description="approvals.timeout")
    reg(
        "protected_files",
        attrgetter("protected_files"),
        render=list,
        description="approvals.protected_files",
    )
    reg("yolo", attrgetter("yolo"), description="profile-level yolo")
    reg(
        "caches",
        resource_of(CACHES_KEY),
        render=_render_caches,
        description="per-profile caches",
        owns=(CACHES_KEY,),
    )
    reg(
        "logs_dir",
        attrgetter("logs_dir"),
        render=_text,
        description="per-profile logs directory",
    )


_register_builtins()
