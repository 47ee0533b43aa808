"""Small pieces every route module shares: the gateway dependency and 404s that reveal nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._json import dumps
from multiplex.gateway.http._listeners import Seat

__all__ = [
    "ERRORS",
    "SELF_APPROVE_REFUSED",
    "STREAM_ANSWERS",
    "GatewayDep",
    "gateway_of",
    "json_response",
    "no_profile",
    "not_found",
    "sse_response",
]

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "Missing or invalid bearer token."},
    404: {"description": "Unknown, or not visible to this token (never 403)."},
}

# A stream's answers beyond ERRORS (docs/gateway.md#server-sent-events).
STREAM_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "SSE stream."},
    429: {"description": "gateway.max_listeners_per_profile streams open; see Retry-After."},
}


async def gateway_of(request: Request) -> Gateway:
    gateway = request.app.state.gateway
    assert isinstance(gateway, Gateway)
    return gateway


GatewayDep = Annotated[Gateway, Depends(gateway_of)]


class _JsonAnswer(Response):
    """A JSON document's bytes with the two headers ``Response`` would make
    (content-length, then content-type), made directly: no per-answer header
    parsing (the hot routes answer thousands a second)."""

    media_type = "application/json"

    def __init__(self, body: bytes, status_code: int = 200) -> None:
        self.status_code = status_code
        self.background = None
        self.body = body
        self.raw_headers = [
            (b"content-length", b"%d" % len(body)),
            (b"content-type", b"application/json"),
        ]


def json_response(data: Any, status_code: int = 200) -> Response:
    """``data`` encoded once by orjson, sent as is.

    A returned ``Response`` skips FastAPI's re-validation of the document
    against the route's ``response_model`` (which stays the documented
    schema): the hot routes build their documents from typed values already.
    """
    return _JsonAnswer(dumps(data), status_code)


SELF_APPROVE_REFUSED = (
    "approvals.self_approve is false for this profile: the admin token or the terminal must answer"
)


def not_found(detail: str) -> HTTPException:
    return HTTPException(status_code=404, detail=" ".join(detail.split()))


def no_profile(caller: Principal, name: str, real: str | None = None) -> HTTPException:
    """404 for a profile; a profile token gets the same words whether it exists or not."""
    if caller.admin and real:
        return not_found(real)
    return not_found(f"no profile named {name!r} is served")


class _Stream(StreamingResponse):
    """A stream that gives its listener seat back when its answer ends, however it ends."""

    def __init__(self, frames: AsyncIterator[bytes], seat: Seat) -> None:
        super().__init__(
            frames,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._seat = seat

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._seat.release()


def sse_response(gw: Gateway, caller: Principal, frames: AsyncIterator[bytes]) -> Response:
    """``frames`` as server-sent events, on one of the caller's listener seats (429 without one)."""
    seat = gw.listeners.take(caller.label)
    return _Stream(frames, seat)
