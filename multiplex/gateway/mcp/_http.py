"""``/mcp`` on ``multiplex up``: the MCP server over Streamable HTTP (docs/agents.md#mcp-over-http).

Pure ASGI in front of the SDK's session manager: the gateway's bearer tokens
(401 without one; a profile token acts as its own profile only, the admin
token may name one), each MCP session bound to the token that opened it (the
SDK answers 404 to any other), resumable streams per session
(:class:`MemoryEventStore`). It sits behind the gateway's body limit and
security headers; runs count against ``gateway.max_runs_per_profile``.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.types import Message, Receive, Scope, Send

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.http._json import send_json
from multiplex.gateway.http._mcp_mount import MCP_PATH
from multiplex.gateway.mcp._event_store import STREAM_OWNER, MemoryEventStore
from multiplex.gateway.mcp._service import PRINCIPAL_KEY, McpService

__all__ = ["MCP_PATH", "McpEndpoint"]

_401 = b'{"detail":"missing or invalid bearer token"}'
_KEEP_SESSIONS = 10_000  # the SDK's own default limit of open sessions


def _bearer(scope: Scope) -> str | None:
    for key, value in scope["headers"]:
        if key == b"authorization":
            text = str(value.decode("latin-1"))
            if text[:7].lower() == "bearer ":
                return text[7:].strip()
            return None
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _unauthorized(send: Send) -> None:
    await send_json(send, 401, _401, ((b"www-authenticate", b"Bearer"),))


class McpEndpoint:
    """The ``/mcp`` ASGI endpoint of one gateway (mounted by ``http._mcp_mount.McpMount``);
    :meth:`running` must wrap its life."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.service = McpService(gateway)
        self.events = MemoryEventStore()
        self.manager = StreamableHTTPSessionManager(self.service.server, event_store=self.events)
        self._app = StreamableHTTPASGIApp(self.manager)
        self._owners: OrderedDict[str, str] = OrderedDict()  # Mcp-Session-Id -> stream owner

    def running(self) -> AbstractAsyncContextManager[None]:
        """The session manager's life (entered in the gateway's lifespan)."""
        return self.manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = self.gateway.auth.identify(_bearer(scope))
        if principal is None:
            await _unauthorized(send)
            return
        # The SDK binds each session to this identity: another token's request for it is a 404.
        user = AuthenticatedUser(
            AccessToken(
                token="-",  # never kept: the digest below identifies the token
                client_id=principal.label,
                scopes=[],
                subject=principal.digest.hex(),
            )
        )
        inner: dict[str, Any] = {**scope, PRINCIPAL_KEY: principal, "user": user}
        session_id = _header(scope, b"mcp-session-id")
        if session_id is None:
            owner = secrets.token_hex(12)
            send = self._learn_session(send, owner)
        else:
            owner = self._owners.get(session_id, "")
        token = STREAM_OWNER.set(owner or None)
        try:
            await self._app(inner, receive, send)
        finally:
            STREAM_OWNER.reset(token)

    def _learn_session(self, send: Send, owner: str) -> Send:
        async def learning(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", ()):
                    if key.lower() == b"mcp-session-id":
                        self._owners[value.decode("latin-1")] = owner
                        while len(self._owners) > _KEEP_SESSIONS:
                            self._owners.popitem(last=False)
            await send(message)

        return learning
