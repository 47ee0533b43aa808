"""Where ``/mcp`` is mounted, with the MCP SDK loaded on its first request (docs/agents.md#mcp-over-http).

The SDK and its protocol models cost about 0.6 s of CPU to import, as much as
the rest of the gateway: a gateway nobody reaches over MCP never pays it
(docs/operations.md#starting-fast). The first request to ``/mcp`` imports it
in a worker thread, so the event loop goes on serving the other routes, and
starts the SDK's session manager in a task of its own that lives until the
gateway's lifespan ends.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Receive, Scope, Send

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.http._json import send_json

if TYPE_CHECKING:
    from multiplex.gateway.mcp import McpEndpoint

__all__ = ["MCP_PATH", "McpMount"]

MCP_PATH = "/mcp"
_GONE = b'{"detail":"the gateway is stopping"}'


class McpMount:
    """``/mcp`` of one gateway; :meth:`running` wraps the app's life."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway
        self._endpoint: McpEndpoint | None = None
        self._starting = asyncio.Lock()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._held: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The gateway's life; at its end the session manager, if one started, stops."""
        try:
            yield
        finally:
            self._stop.set()
            if self._held is not None:
                await asyncio.gather(self._held, return_exceptions=True)

    def route(self, other: ASGIApp) -> ASGIApp:
        """An ASGI app that serves :data:`MCP_PATH` here and everything else with ``other``."""

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["path"] in (MCP_PATH, MCP_PATH + "/"):
                endpoint = self._endpoint or await self._start()
                if endpoint is None:
                    await _stopping(send)
                else:
                    await endpoint(scope, receive, send)
            else:
                await other(scope, receive, send)

        return app

    async def _start(self) -> McpEndpoint | None:
        """The endpoint once its manager runs; None if the gateway stops first.

        One manager is started, by whichever request comes first; it is owned by a
        task of its own, so a request cancelled while it waits leaves it running for
        the next one. A manager that failed to start raises to the requests waiting
        for it, and the next request starts another.
        """
        async with self._starting:
            if self._held is None and not self._stop.is_set():
                module = await asyncio.to_thread(importlib.import_module, "multiplex.gateway.mcp")
                if not self._stop.is_set():  # the gateway may have begun to stop meanwhile
                    endpoint = module.McpEndpoint(self._gateway)
                    self._held = asyncio.create_task(self._hold(endpoint))
            held = self._held
        if held is None:
            return None
        ready = asyncio.create_task(self._ready.wait())
        try:
            await asyncio.wait((held, ready), return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if self._endpoint is None and held.done() and not held.cancelled():
            failure = held.exception()
            if failure is not None:
                if self._held is held:
                    self._held = None
                raise failure
        return self._endpoint if not self._stop.is_set() else None

    async def _hold(self, endpoint: McpEndpoint) -> None:
        # The SDK's manager is entered and left in this one task, as its task group needs.
        async with endpoint.running():
            self._endpoint = endpoint
            self._ready.set()
            await self._stop.wait()
        self._endpoint = None


async def _stopping(send: Send) -> None:
    await send_json(send, 503, _GONE)
