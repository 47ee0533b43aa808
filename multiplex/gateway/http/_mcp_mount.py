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
                await self._held

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
        async with self._starting:
            if self._endpoint is None and not self._stop.is_set():
                module = await asyncio.to_thread(importlib.import_module, "multiplex.gateway.mcp")
                endpoint: McpEndpoint = module.McpEndpoint(self._gateway)
                ready = asyncio.Event()
                held = asyncio.create_task(self._hold(endpoint, ready))
                waiting = asyncio.create_task(ready.wait())
                await asyncio.wait((held, waiting), return_when=asyncio.FIRST_COMPLETED)
                if not ready.is_set():  # the manager failed to start: its error, to this request
                    waiting.cancel()
                    held.result()
                    return None
                self._held = held
                self._endpoint = endpoint
        return self._endpoint

    async def _hold(self, endpoint: McpEndpoint, ready: asyncio.Event) -> None:
        # The SDK's manager is entered and left in this one task, as its task group needs.
        async with endpoint.running():
            ready.set()
            await self._stop.wait()


async def _stopping(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(_GONE)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _GONE})
