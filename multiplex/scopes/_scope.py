"""The turn scope: ONE ContextVar holding an immutable ProfileScope (docs/multiplexing.md#the-model)."""

from __future__ import annotations

import enum
from collections import namedtuple
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
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
    "scope_head",
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
# their docstrings set as namedtuple documents. The head (view .. logs_dir) is
# the same for every turn of one profile epoch: it is built once per view
# (scope_head) and a turn adds its own four fields, so each surface's resolver
# reads one field instead of walking view.approvals.<field>.
_FIELDS = namedtuple(
    "_FIELDS",
    (
        "view",
        "profile",
        "strict",
        "others",
        "get_resource",
        "name",
        "home",
        "epoch",
        "cwd",
        "env",
        "backend",
        "redact_secrets",
        "credential_mounts",
        "approvals",
        "allowlist",
        "deny",
        "approval_mode",
        "unattended",
        "approval_timeout",
        "protected_files",
        "yolo",
        "logs_dir",
        "session",
        "turn_id",
        "context",
        "parent",
    ),
)
for _name, _doc in (
    ("view", "the profile's resolved settings at this turn's epoch"),
    ("profile", "The owning profile object (its live allowlist store, sessions, ...)."),
    ("strict", "whether the turn may not change process state"),
    ("get_resource", "The profile's resource under a key if it was created, else None."),
    ("name", "the profile's name"),
    ("home", "the profile home"),
    ("epoch", "the config epoch the turn started in"),
    ("cwd", "the working directory of the profile's commands (None: the backend's)"),
    ("env", "the environment of the profile's commands"),
    ("backend", "the terminal backend"),
    ("redact_secrets", "whether layer-2 redaction is on"),
    ("credential_mounts", "the credential mount plan"),
    ("approvals", "the profile's approvals settings"),
    ("allowlist", "The profile's live allowlist store (never a stale copy)."),
    ("deny", "approvals.deny"),
    ("approval_mode", "approvals.mode"),
    ("unattended", "approvals.unattended"),
    ("approval_timeout", "approvals.timeout"),
    ("protected_files", "approvals.protected_files"),
    ("yolo", "approvals.yolo (profile-level)"),
    ("logs_dir", "the profile's logs directory"),
    ("session", "the session the turn belongs to"),
    ("turn_id", "this turn's random id"),
    ("context", "where the turn comes from"),
    ("parent", "the delegating turn's scope, or None"),
):
    getattr(_FIELDS, _name).__doc__ = _doc
del _name, _doc

ScopeHead = tuple[object, ...]


def scope_head(
    view: ProfileView, profile: Profile, strict: bool, others: Callable[[], KnownValues]
) -> ScopeHead:
    """The fields every turn of ``view``'s epoch shares (build once per view)."""
    approvals = view.approvals
    return (
        view,
        profile,
        strict,
        others,
        profile.get_resource,  # the dict's own get: never creates a resource
        view.name,
        view.home,
        view.epoch,
        view.cwd,
        view.env,
        view.backend,
        view.redact_secrets,
        view.credential_mounts,
        approvals,
        profile.allowlist,  # the live store: one object for the profile's lifetime
        approvals.deny,
        approvals.mode,
        approvals.unattended,
        approvals.timeout,
        approvals.protected_files,
        approvals.yolo,
        view.logs_dir,
    )


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

    # Built as ProfileScope(head + tail): tuple's own constructor, in C (a turn's
    # path; a Python __new__ would run a frame). ``of`` names the fields.
    @classmethod
    def of(
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
        """The scope of one turn of ``profile`` at ``view``'s epoch."""
        return cls((*scope_head(view, profile, strict, others), session, turn_id, context, parent))

    __eq__ = object.__eq__  # identity, like the turn it belongs to
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    if TYPE_CHECKING:

        @property
        def view(self) -> ProfileView: ...
        @property
        def profile(self) -> Profile:
            """The owning profile object (its live allowlist store, sessions, ...)."""

        @property
        def strict(self) -> bool: ...
        @property
        def _others(self) -> Callable[[], KnownValues]: ...
        @property
        def get_resource(self) -> Callable[[str], object | None]:
            """The profile's resource under a key if it was created, else None."""

        @property
        def name(self) -> str: ...
        @property
        def home(self) -> Path: ...
        @property
        def epoch(self) -> int: ...
        @property
        def cwd(self) -> Path | None: ...
        @property
        def env(self) -> Mapping[str, str]: ...
        @property
        def backend(self) -> str: ...
        @property
        def redact_secrets(self) -> bool: ...
        @property
        def credential_mounts(self) -> tuple[CredentialMount, ...]: ...
        @property
        def approvals(self) -> ApprovalSettings: ...
        @property
        def allowlist(self) -> AllowlistStore:
            """The profile's live allowlist store (never a stale copy)."""

        @property
        def deny(self) -> tuple[str, ...]: ...
        @property
        def approval_mode(self) -> str: ...
        @property
        def unattended(self) -> str: ...
        @property
        def approval_timeout(self) -> float: ...
        @property
        def protected_files(self) -> tuple[str, ...]: ...
        @property
        def yolo(self) -> bool: ...
        @property
        def logs_dir(self) -> Path: ...
        @property
        def session(self) -> str: ...
        @property
        def turn_id(self) -> str: ...
        @property
        def context(self) -> ContextKind: ...
        @property
        def parent(self) -> ProfileScope | None: ...

    else:
        # namedtuple's field getters: C descriptors that index the tuple, read
        # without the call a property makes (a turn reads each once a surface).
        view = _FIELDS.view
        profile = _FIELDS.profile
        strict = _FIELDS.strict
        _others = _FIELDS.others
        get_resource = _FIELDS.get_resource
        name = _FIELDS.name
        home = _FIELDS.home
        epoch = _FIELDS.epoch
        cwd = _FIELDS.cwd
        env = _FIELDS.env
        backend = _FIELDS.backend
        redact_secrets = _FIELDS.redact_secrets
        credential_mounts = _FIELDS.credential_mounts
        approvals = _FIELDS.approvals
        allowlist = _FIELDS.allowlist
        deny = _FIELDS.deny
        approval_mode = _FIELDS.approval_mode
        unattended = _FIELDS.unattended
        approval_timeout = _FIELDS.approval_timeout
        protected_files = _FIELDS.protected_files
        yolo = _FIELDS.yolo
        logs_dir = _FIELDS.logs_dir
        session = _FIELDS.session
        turn_id = _FIELDS.turn_id
        context = _FIELDS.context
        parent = _FIELDS.parent

    # -- live per-profile resources --------------------------------------------
    def cache(self, name: str) -> ProfileCache:
        """This profile's cache called ``name`` (one object per profile home)."""
        caches = self.get_resource(CACHES_KEY)
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
        return (tuple(self),)

    def __repr__(self) -> str:
        return (
            f"ProfileScope(name={self.name!r}, epoch={self.epoch}, session={self.session!r}, "
            f"turn={self.turn_id!r}, context={self.context.value!r})"
        )


# ProfileScope from a view's head and a turn's tail (session, turn_id, context, parent).
new_scope: Callable[[tuple[object, ...]], ProfileScope] = ProfileScope


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
