"""The FastAPI app of the HTTP gateway (docs/gateway.md)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from multiplex._errors import RoutingError
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api import (
    _api_approvals,
    _api_history,
    _api_info,
    _api_kernels,
    _api_policy,
    _api_runs,
    _api_sessions,
)
from multiplex.gateway.http._apidocs import mount_api_docs
from multiplex.gateway.http._fastpath import FastPath
from multiplex.gateway.http._headers import SecurityHeaders
from multiplex.gateway.http._json_body import JsonBody, document_body_errors
from multiplex.gateway.http._limits import BodyLimit, validation_error
from multiplex.gateway.http._mcp_mount import McpMount
from multiplex.gateway.http._methods import method_not_allowed
from multiplex.supervision import Supervisor

__all__ = ["STATIC_DIR", "GatewayApp", "create_app"]

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
_STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")
_PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>multiplex</title></head>
<body><h1>multiplex gateway</h1>
<p>The dashboard page is not installed. The API is at <a href="/docs">/docs</a>.</p>
</body></html>
"""


class GatewayApp(FastAPI):
    """The FastAPI app behind the gateway's own ASGI layers (:attr:`front`).

    The security headers, the body limit and the hot routes' fast path run
    before FastAPI's own per-request wrappers (its error, telemetry and body
    middleware), so an ordinary hot request costs none of them; everything else
    goes on to :meth:`framework`.
    """

    front: ASGIApp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.front(scope, receive, send)

    async def framework(self, scope: Scope, receive: Receive, send: Send) -> None:
        """FastAPI itself: every route, its middleware, its errors."""
        await super().__call__(scope, receive, send)


def create_app(
    sup: Supervisor,
    *,
    admin_token: str,
    grace: float = 10.0,
    max_workers: int = 256,
    keep_runs: int = 1000,
) -> FastAPI:
    """The gateway app for ``sup``: API, dashboard and health, with ``admin_token`` for admins.

    The app never starts or closes the supervisor; its lifespan end withdraws
    pending approvals and waits up to ``grace`` seconds for running commands.
    The limits of ``sup.config.gateway`` apply (docs/gateway.md#limits).
    """
    limits = sup.config.gateway
    gateway = Gateway(
        sup,
        admin_token=admin_token,
        max_workers=max_workers,
        keep_runs=keep_runs,
        max_runs_per_profile=limits.max_runs_per_profile,
    )

    mcp = McpMount(gateway)  # /mcp (docs/agents.md#mcp-over-http), the SDK on first use

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if gateway.cluster is not None:
            await gateway.cluster.start()
        try:
            async with mcp.running():
                yield
                await asyncio.to_thread(gateway.drain, grace)
        finally:
            if gateway.cluster is not None:
                await gateway.cluster.stop()

    app = GatewayApp(
        title="multiplex gateway",
        version="0.1.0",
        summary="Runs, approvals and profiles of many agent profile homes (docs/gateway.md).",
        lifespan=lifespan,
        docs_url=None,  # served offline below, never from a CDN
        redoc_url=None,
    )
    mount_api_docs(app)
    app.state.gateway = gateway
    # Outermost first: the headers on every answer (docs/security.md#the-dashboard-and-http-headers),
    # the body limit before anything reads a body, /mcp, the hot routes, then FastAPI.
    fast = JsonBody(FastPath(app.framework, gateway))  # a /v1/ body that is not JSON: 400
    front = mcp.route(fast)  # /mcp behind the same headers and body limit
    app.front = SecurityHeaders(
        BodyLimit(front, limit=lambda: sup.config.gateway.max_request_bytes)
    )
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(405, method_not_allowed)  # Allow: every method of the path
    app.include_router(_api_runs.router)
    app.include_router(_api_approvals.router)  # after runs: the schema's order
    app.include_router(_api_info.router)
    app.include_router(_api_history.router)
    app.include_router(_api_kernels.router)
    app.include_router(_api_sessions.router)
    app.include_router(_api_policy.router)

    @app.exception_handler(RoutingError)
    async def _routing(request: Request, exc: RoutingError) -> JSONResponse:
        return JSONResponse({"detail": " ".join(str(exc).split())}, status_code=404)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def dashboard() -> Response:
        page = STATIC_DIR / "dashboard.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html; charset=utf-8")
        return HTMLResponse(_PLACEHOLDER)

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        # One flat directory; a name with a slash or a leading dot never matches.
        if _STATIC_NAME.fullmatch(name):
            path = STATIC_DIR / name
            if path.is_file():
                return FileResponse(path)
        return JSONResponse({"detail": "not found"}, status_code=404)

    document_body_errors(app)
    return app
