"""Security headers on every response (docs/security.md#the-dashboard-and-http-headers).

A pure ASGI middleware (never ``BaseHTTPMiddleware``, which breaks
contextvars): it adds the headers to the ``http.response.start`` message of
every HTTP response, the fast path's and error answers included, so no route
can forget them. The dashboard loads one script and one stylesheet from
``/static`` and inserts all data as text, so the policy allows no inline
script, no inline style, no other origin and no framing. FastAPI's own
``/docs`` and ``/redoc`` pages need inline script and a CDN: they get every
header but the Content-Security-Policy.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["ALL_HEADERS", "CONTENT_SECURITY_POLICY", "SECURITY_HEADERS", "SecurityHeaders"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
)
# What every answer but the API documentation pages carries, in this order.
ALL_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    *SECURITY_HEADERS,
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
)
_API_DOC_PAGES = ("/docs", "/redoc")  # third-party pages with inline script (FastAPI's)


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` (and the CSP) to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        extra = SECURITY_HEADERS if path.startswith(_API_DOC_PAGES) else ALL_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", ())}
                message["headers"] = [
                    *message.get("headers", ()),
                    *(h for h in extra if h[0] not in present),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)
