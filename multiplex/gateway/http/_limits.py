"""Request limits that keep one client from hurting the others (docs/gateway.md#limits).

``BodyLimit`` is pure ASGI middleware: a request whose ``Content-Length`` is
over the limit answers 413 before any of it is read, and a chunked body that
grows past the limit is cut off with 413 as soon as it does. Validation errors
(422) list where and what, never the ``input`` that failed: a body is not
echoed back, however large or secret it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from multiplex.gateway.http._json import send_json

__all__ = ["BodyLimit", "validation_error"]

_413 = b'{"detail":"request body too large"}'


async def _send_413(send: Send, limit: int) -> None:
    limited = ((b"connection", b"close"), (b"x-max-request-bytes", str(limit).encode()))
    await send_json(send, 413, _413, limited)


class BodyLimit:
    """Refuse request bodies over ``limit()`` bytes with 413 (pure ASGI, contextvars intact).

    ``limit`` is read once per request, so a live reload of
    ``gateway.max_request_bytes`` applies to the next request.
    """

    def __init__(self, app: ASGIApp, limit: Callable[[], int]) -> None:
        self.app = app
        self._limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit()
        declared: int | None = None
        chunked = False
        for key, value in scope["headers"]:
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = limit + 1  # unreadable length: refuse rather than guess
                if declared > limit:
                    await _send_413(send, limit)
                    return
            elif key == b"transfer-encoding":
                chunked = True
        if declared is not None and not chunked:
            # The server reads exactly the declared length, within the limit: nothing to count.
            await self.app(scope, receive, send)
            return
        seen = 0
        answered = False  # the 413 went out: whatever the app sends after is dropped
        started = False

        async def limited_receive() -> Message:
            nonlocal seen, answered
            if answered:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit and not started:
                    answered = True
                    await _send_413(send, limit)
                    # The app sees a client that went away, and stops reading.
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if answered:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, limited_receive, guarded_send)


def _clean(error: dict[str, Any]) -> dict[str, Any]:
    # Only where and what: "input" (and "ctx", which may quote it) would echo the
    # body; a key name in "loc" comes from the body too, so it is cut short.
    loc = [p if isinstance(p, int) else str(p)[:64] for p in error.get("loc", ())]
    return {"type": error.get("type"), "loc": loc, "msg": str(error.get("msg", ""))[:200]}


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 with each error's ``type``, ``loc`` and ``msg``; never the input."""
    assert isinstance(exc, RequestValidationError)
    errors = [_clean(dict(e)) for e in exc.errors()[:20]]
    return JSONResponse({"detail": errors}, status_code=422)
