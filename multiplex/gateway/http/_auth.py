"""Bearer tokens: the admin sees every profile, a profile token only its own (docs/gateway.md).

A token is hashed (SHA-256) once; the admin digest is compared with
``hmac.compare_digest`` and profile tokens are found by digest in an index of
every profile's current ``.env`` token, rebuilt after each reload, so a reload
that changes a token takes effect at once and timing tells a guesser nothing
about how close a guess came.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
from dataclasses import dataclass, field
from typing import Annotated, Literal

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from multiplex._errors import ConfigError
from multiplex.profiles import MIN_TOKEN_LENGTH, TOKEN_KEY
from multiplex.supervision import Supervisor

__all__ = ["TOKEN_KEY", "Authenticator", "Caller", "Principal", "principal_of"]

log = logging.getLogger("multiplex.gateway")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the admin (every profile) or one profile's token."""

    role: Literal["admin", "profile"]
    profile: str | None = None
    # The presented token's digest: a stream or a wait re-checks it after every reload.
    digest: bytes = field(default=b"", compare=False, repr=False)

    @property
    def admin(self) -> bool:
        return self.role == "admin"

    def sees(self, profile: str) -> bool:
        """Whether this caller may see anything of ``profile`` (else: answer 404)."""
        return self.role == "admin" or self.profile == profile

    @property
    def label(self) -> str:
        return "admin" if self.role == "admin" else f"profile:{self.profile}"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


class Authenticator:
    """Maps a presented bearer token to a :class:`Principal`, or to nobody.

    Profile tokens are looked up by their SHA-256 digest in an index built from
    every profile's current ``.env`` and rebuilt after any reload
    (:meth:`invalidate`), so a request costs one hash and one dict lookup
    however many profiles are served. The admin digest is compared with
    ``hmac.compare_digest``; a dict lookup keyed by a digest tells a guesser
    nothing about how close a guess came.
    """

    def __init__(self, sup: Supervisor, admin_token: str) -> None:
        if len(admin_token.strip()) < MIN_TOKEN_LENGTH:
            # docs/security.md#tokens-and-ids: the same floor as a profile token.
            raise ConfigError(
                f"the admin token is shorter than {MIN_TOKEN_LENGTH} characters; refused",
                key="MULTIPLEX_ADMIN_TOKEN",
            )
        self._sup = sup
        self._admin = _digest(admin_token)
        self._lock = threading.Lock()
        self._index: dict[bytes, tuple[str, ...]] | None = None
        self._warned: set[frozenset[str]] = set()

    def invalidate(self) -> None:
        """A profile reloaded: its token may have changed (the next lookup rebuilds)."""
        self._index = None

    def _profile_index(self) -> dict[bytes, tuple[str, ...]]:
        index = self._index
        if index is not None:
            return index
        with self._lock:
            if self._index is not None:
                return self._index
            built: dict[bytes, list[str]] = {}
            for name, profile in self._sup.profiles.items():
                if not profile.loaded:
                    continue  # one that never loaded has no token
                token = profile.state.dotenv.get(TOKEN_KEY, "").strip()  # the last good .env
                if token:
                    built.setdefault(_digest(token), []).append(name)
            self._index = {d: tuple(names) for d, names in built.items()}
            return self._index

    def identify(self, token: str | None) -> Principal | None:
        """The caller a token stands for; None for a missing or unknown token."""
        if not token:
            return None
        presented = _digest(token)
        if hmac.compare_digest(presented, self._admin):
            return Principal("admin", digest=presented)
        matches = self._profile_index().get(presented, ())
        if len(matches) == 1:
            return Principal("profile", matches[0], digest=presented)
        if matches:
            # Two homes share one token: which profile it means is unknowable, so
            # it means none (telling the operator once, by profile names only).
            key = frozenset(matches)
            if key not in self._warned:
                self._warned.add(key)
                log.warning("profiles %s share one MULTIPLEX_TOKEN: it is refused", sorted(matches))
        return None

    def current(self, principal: Principal) -> bool:
        """Whether the token ``principal`` was identified by still stands for it.

        docs/security.md#tokens-and-ids: a token rotated or removed from ``.env``
        ends the streams and waits opened with it (the gateway asks after each reload).
        """
        if principal.admin:
            return True  # the admin token is fixed for the life of the process
        return self._profile_index().get(principal.digest, ()) == (principal.profile,)


_bearer = HTTPBearer(
    auto_error=False, description="The admin token or a profile's MULTIPLEX_TOKEN."
)


async def principal_of(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """FastAPI dependency: the caller, or 401 for a missing or unknown token."""
    auth: Authenticator = request.app.state.gateway.auth
    token = credentials.credentials if credentials is not None else None
    principal = auth.identify(token)
    if principal is None:
        raise HTTPException(
            status_code=401,
            detail="missing or invalid bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


Caller = Annotated[Principal, Depends(principal_of)]
