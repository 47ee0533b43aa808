"""Bearer tokens: the admin sees every profile, a profile token only its own (docs/gateway.md).

A token is compared with EVERY known token (admin and each profile's
``MULTIPLEX_TOKEN``) by ``hmac.compare_digest`` over fixed-length SHA-256
digests, so neither timing nor an early exit tells which profile (if any) a
guess came close to. Profile tokens are read from the profile's current
``.env`` state, so a reload that changes a token takes effect at once.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from multiplex.supervision import Supervisor

__all__ = ["TOKEN_KEY", "Authenticator", "Caller", "Principal", "principal_of"]

TOKEN_KEY = "MULTIPLEX_TOKEN"
log = logging.getLogger("multiplex.gateway")
_NO_TOKEN = bytes(32)  # stands in for a profile without a token: compared, never matched


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the admin (every profile) or one profile's token."""

    role: Literal["admin", "profile"]
    profile: str | None = None

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
    """Maps a presented bearer token to a :class:`Principal`, or to nobody."""

    def __init__(self, sup: Supervisor, admin_token: str) -> None:
        if not admin_token:
            raise ValueError("the admin token must not be empty")
        self._sup = sup
        self._admin = _digest(admin_token)
        self._lock = threading.Lock()
        # profile name -> (the state object the digest was computed from, digest)
        self._cache: dict[str, tuple[object, bytes | None]] = {}
        self._warned: set[frozenset[str]] = set()

    def _profile_digests(self) -> list[tuple[str, bytes | None]]:
        out: list[tuple[str, bytes | None]] = []
        with self._lock:
            for name, profile in self._sup.profiles.items():
                if not profile.loaded:
                    out.append((name, None))
                    continue
                state = profile.state  # the last good .env (a broken reload keeps it)
                cached = self._cache.get(name)
                if cached is None or cached[0] is not state:
                    token = state.dotenv.get(TOKEN_KEY, "").strip()
                    cached = (state, _digest(token) if token else None)
                    self._cache[name] = cached
                out.append((name, cached[1]))
        return out

    def identify(self, token: str | None) -> Principal | None:
        """The caller a token stands for; None for a missing or unknown token."""
        if not token:
            return None
        presented = _digest(token)
        admin = hmac.compare_digest(presented, self._admin)
        matches: list[str] = []
        for name, digest in self._profile_digests():
            # Compared against every profile, matched or not: no early exit.
            same = hmac.compare_digest(presented, digest if digest is not None else _NO_TOKEN)
            if same and digest is not None:
                matches.append(name)
        if admin:
            return Principal("admin")
        if len(matches) == 1:
            return Principal("profile", matches[0])
        if matches:
            # Two homes share one token: which profile it means is unknowable, so
            # it means none (telling the operator once, by profile names only).
            key = frozenset(matches)
            if key not in self._warned:
                self._warned.add(key)
                log.warning("profiles %s share one MULTIPLEX_TOKEN: it is refused", sorted(matches))
        return None


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
