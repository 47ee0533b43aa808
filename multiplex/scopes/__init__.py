"""The contextvars scope, resolvers, per-profile caches and propagation (docs/multiplexing.md)."""

from multiplex.scopes._caches import CACHES_KEY, ProfileCache, ProfileCaches
from multiplex.scopes._executor import ScopedExecutor, run_in_scope
from multiplex.scopes._resolve import CredentialMount, resolve_cwd
from multiplex.scopes._scope import (
    ContextKind,
    ProfileScope,
    bind,
    bind_token,
    current_scope,
    new_scope,
    peek_scope,
    previous_of,
    restore,
    scope_head,
    set_process_scope,
    unbind_token,
)
from multiplex.scopes._strict import install_strict_hook
from multiplex.scopes._surfaces import (
    SURFACES,
    Surface,
    SurfaceRegistry,
    register_surface,
    resource_of,
)
from multiplex.scopes._view import ProfileView, build_view

__all__ = [
    "CACHES_KEY",
    "SURFACES",
    "ContextKind",
    "CredentialMount",
    "ProfileCache",
    "ProfileCaches",
    "ProfileScope",
    "ProfileView",
    "ScopedExecutor",
    "Surface",
    "SurfaceRegistry",
    "bind",
    "bind_token",
    "build_view",
    "current_scope",
    "install_strict_hook",
    "new_scope",
    "peek_scope",
    "previous_of",
    "register_surface",
    "resolve_cwd",
    "resource_of",
    "restore",
    "run_in_scope",
    "scope_head",
    "set_process_scope",
    "unbind_token",
]
