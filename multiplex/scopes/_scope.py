"""The turn scope: ONE ContextVar holding an immutable ProfileScope (docs/multiplexing.md#the-model)."""

from __future__ import annotations

import enum
from collections import namedtuple
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex._errors import UnscopedAccessError
from multiplex.scopes._caches import CACHES_KEY, ProfileCache, ProfileCaches

if TYPE_CHECKING:
    from multiplex.profiles import AllowlistStore, ApprovalSettings, Profile
    from multiplex.redaction import KnownValues
    from multiplex.scopes._resolve import CredentialMount
    from multiplex.scopes._view import ProfileView

__all__ = [
    "ContextKind",
    "ProfileScope",
    "bind",
    "bind_token",
    "current_scope",
    "new_scope",
    "peek_scope",
    "previous_of",
    "restore",
    "set_process_scope",
    "unbind_token",
]


class ContextKind(enum.StrEnum):
    """Where a turn comes from; says whether a human can answer a prompt (docs/approvals.md#who-can-answer)."""

    INTERACTIVE = "interactive"
    GATEWAY = "gateway"
    API = "api"
    CRON = "cron"
    WEBHOOK = "webhook"
    SINGLE_QUERY = "single_query"
    # An agent's own pre-tool hook (docs/agents.md): its own prompt answers, so the
    # gate's "ask" is handed over; multiplex never waits for a human itself.
    HOOK = "hook"

    @property
    def unattended(self) -> bool:
        """Nobody can ever answer a prompt in this kind of context."""
        return self in (ContextKind.CRON, ContextKind.WEBHOOK, ContextKind.SINGLE_QUERY)


# Only its field getters are used (C descriptors that index any tuple), with
# their docstrings set as namedtuple documents.
_FIELDS = namedtuple(
    "_FIELDS", ("view", "session", "turn_id", "context", "parent", "strict", "profile", "others")
)
for _name, _doc in (
    ("view", "the profile's resolved settings at this turn's epoch"),
    ("session", "the session the turn belongs to"),
    ("turn_id", "this turn's random id"),
    ("context", "where the turn comes from"),
    ("parent", "the delegating turn's scope, or None"),
    ("strict", "whether the turn may not change process state"),
    ("profile", "The owning profile object (its live allowlist store, sessions, ...)."),
):
    getattr(_FIELDS, _name).__doc__ = _doc
del _name, _doc


class ProfileScope(tuple):  # type: ignore[type-arg]
    """One turn's immutable view of its own profile.

    Everything a turn may reach of its profile is here or behind a method here;
    nothing of another profile is. ``view`` is the profile's resolved settings
    at the config epoch the turn started in. Two scopes are equal only if they
    are the same turn's scope.
    """

    # A tuple underneath: one turn builds one scope, and a tuple is built in one
    # step where a frozen dataclass sets each field through object.__setattr__
    # (a third of a turn's cost); its fields are read by C accessors.
    __slots__ = ()

    def __new__(
        cls,
        view: ProfileView,
        session: str,
        turn_id: str,
        context: ContextKind,
        parent: ProfileScope | None,
        strict: bool,
        profile: Profile,
        others: Callable[[], KnownValues],
    ) -> ProfileScope:
        return tuple.__new__(
            cls, (view, session, turn_id, context, parent, strict, profile, others)
        )

    __eq__ = object.__eq__  # identity, like the turn it belongs to
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    if TYPE_CHECKING:

        @property
        def view(self) -> ProfileView: ...
        @property
        def session(self) -> str: ...
        @property
        def turn_id(self) -> str: ...
        @property
        def context(self) -> ContextKind: ...
        @property
        def parent(self) -> ProfileScope | None: ...
        @property
        def strict(self) -> bool: ...
        @property
        def profile(self) -> Profile:
            """The owning profile object (its live allowlist store, sessions, ...)."""

        @property
        def _others(self) -> Callable[[], KnownValues]: ...

    else:
        # namedtuple's field getters: C descriptors that index the tuple, read
        # without the call a property makes (a turn reads ``view`` once a surface).
        view = _FIELDS.view
        session = _FIELDS.session
        turn_id = _FIELDS.turn_id
        context = _FIELDS.context
        parent = _FIELDS.parent
        strict = _FIELDS.strict
        profile = _FIELDS.profile
        _others = _FIELDS.others

    # -- the profile, at this turn's epoch -------------------------------------
    @property
    def name(self) -> str:
        return self.view.name

    @property
    def home(self) -> Path:
        return self.view.home

    @property
    def epoch(self) -> int:
        return self.view.epoch

    @property
    def cwd(self) -> Path | None:
        return self.view.cwd

    @property
    def env(self) -> Mapping[str, str]:
        return self.view.env

    @property
    def backend(self) -> str:
        return self.view.backend

    @property
    def redact_secrets(self) -> bool:
        return self.view.redact_secrets

    @property
    def credential_mounts(self) -> tuple[CredentialMount, ...]:
        return self.view.credential_mounts

    @property
    def approvals(self) -> ApprovalSettings:
        return self.view.approvals

    # -- live per-profile resources --------------------------------------------
    @property
    def allowlist(self) -> AllowlistStore:
        """The profile's live allowlist store (never a stale copy)."""
        return self.profile.allowlist

    def cache(self, name: str) -> ProfileCache:
        """This profile's cache called ``name`` (one object per profile home)."""
        caches = self.profile.get_resource(CACHES_KEY)
        if caches is None:
            home = self.view.home
            caches = self.profile.resource(CACHES_KEY, lambda _p: ProfileCaches(home))
        assert isinstance(caches, ProfileCaches)
        return caches.get(name)

    def redact(self, text: str) -> str:
        """Mask secrets in this profile's output (docs/redaction.md)."""
        from multiplex.redaction import Redactor

        return Redactor(
            self.view.known_secrets, layer2=self.view.redact_secrets, others=self._others()
        ).redact(text)

    def __getnewargs__(self) -> tuple[object, ...]:  # copy and pickle build it anew
        return tuple(self)

    def __repr__(self) -> str:
        return (
            f"ProfileScope(name={self.name!r}, epoch={self.epoch}, session={self.session!r}, "
            f"turn={self.turn_id!r}, context={self.context.value!r})"
        )


ScopeFields = tuple[
    "ProfileView",
    str,
    str,
    ContextKind,
    "ProfileScope | None",
    bool,
    "Profile",
    "Callable[[], KnownValues]",
]
# ProfileScope(...) with its fields as one tuple, in one C call (a turn's path:
# the class call runs __new__ in Python first).
new_scope: Callable[[ScopeFields], ProfileScope] = partial(tuple.__new__, ProfileScope)


# docs/multiplexing.md#the-model: the one ContextVar. Its value is never mutated, only replaced.
_SCOPE: ContextVar[ProfileScope | None] = ContextVar("multiplex_scope", default=None)


class _ProcessScope:
    # Standalone mode binds one profile for the whole process (docs/configuration.md#supervisor-config-multiplexyaml); a
    # thread started without a copied context still sees it. Multiplex mode
    # never sets it.
    scope: ProfileScope | None = None


def current_scope() -> ProfileScope:
    """The scope bound to the running turn.

    Raises ``UnscopedAccessError`` outside any turn in multiplex mode: there is
    no silent fallback to some launch profile.
    """
    scope = _SCOPE.get()
    if scope is not None:
        return scope
    if _ProcessScope.scope is not None:
        return _ProcessScope.scope
    raise UnscopedAccessError(
        "no profile scope is bound: run this inside Supervisor.turn(...) or propagate "
        "the context (ScopedExecutor, run_in_scope)"
    )


def peek_scope() -> ProfileScope | None:
    """The bound scope, or None (never raises)."""
    return _SCOPE.get() or _ProcessScope.scope


def bind(scope: ProfileScope | None) -> ProfileScope | None:
    """Bind ``scope`` in the current context; return the scope it replaced."""
    previous = _SCOPE.get()
    _SCOPE.set(scope)
    return previous


def restore(previous: ProfileScope | None) -> None:
    """Restore what :func:`bind` replaced (works across copied contexts, unlike reset)."""
    _SCOPE.set(previous)


# A turn's own bind and unbind (Supervisor.turn): the ContextVar's set and reset
# themselves, with no Python frame between. The token's reset raises ValueError
# in another context than the one it was made in (then: restore(previous_of(token))).
bind_token: Callable[[ProfileScope | None], Token[ProfileScope | None]] = _SCOPE.set
unbind_token: Callable[[Token[ProfileScope | None]], None] = _SCOPE.reset


def previous_of(token: Token[ProfileScope | None]) -> ProfileScope | None:
    """The scope bound before ``token``'s bind (what :func:`bind` would have returned)."""
    old = token.old_value
    return None if old is Token.MISSING else old


def set_process_scope(scope: ProfileScope | None) -> None:
    """Standalone mode only: bind ``scope`` for the whole process."""
    _ProcessScope.scope = scope
