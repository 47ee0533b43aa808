"""The hot routes without the framework's per-request machinery (docs/gateway.md#performance).

``POST /v1/runs``, ``GET /v1/runs/{id}`` and ``POST /v1/approvals/test`` are
what agents call hundreds of times a second. This pure ASGI middleware answers
their ordinary case directly: a JSON body validated by the same pydantic model
in one call, the same bearer lookup, the same handler functions the FastAPI
routes use, one orjson-encoded response. Anything out of the ordinary (no or
an unknown token, a body that does not validate, another content type) is
replayed, byte for byte, into the FastAPI app, so errors (401, 422, their
exact bodies) are the framework's own and the OpenAPI schema stays the
contract.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import HTTPException
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._api_runs import run_document, start_run
from multiplex.gateway.api._models import RunIn, TestIn
from multiplex.gateway.api._verdict import verdict_of
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._json import dumps

__all__ = ["FastPath", "token_and_json"]

_RUNS = "/v1/runs"
_RUN_PREFIX = "/v1/runs/"
_TEST = "/v1/approvals/test"
# A handler answers, or returns None (before any side effect) to have the app answer.
Handler = Callable[[Gateway, Principal, bytes, str], Awaitable[Response | None]]


async def _test(gw: Gateway, caller: Principal, body: bytes, path: str) -> Response | None:
    try:
        parsed = TestIn.model_validate_json(body)
    except ValidationError:
        return None
    return await verdict_of(gw, caller, parsed)


async def _runs(gw: Gateway, caller: Principal, body: bytes, path: str) -> Response | None:
    try:
        parsed = RunIn.model_validate_json(body)
    except ValidationError:
        return None
    return await start_run(gw, caller, parsed)


async def _run(gw: Gateway, caller: Principal, body: bytes, path: str) -> Response | None:
    return await run_document(gw, caller, path[len(_RUN_PREFIX) :])


def _route(method: str, path: str) -> Handler | None:
    if method == "POST":
        if path == _TEST:
            return _test
        if path == _RUNS:
            return _runs
    elif method == "GET" and path.startswith(_RUN_PREFIX):
        rest = path[len(_RUN_PREFIX) :]
        if rest and "/" not in rest:
            return _run
    return None


def token_and_json(scope: Scope) -> tuple[str | None, bool]:
    """The bearer token (or None) and whether the body is declared JSON."""
    token: str | None = None
    is_json = False
    for key, value in scope["headers"]:
        if key == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and credentials:
                token = credentials
        elif key == b"content-type":
            is_json = value.split(b";", 1)[0].strip().lower() == b"application/json"
    return token, is_json


class FastPath:
    """Answer the hot routes' ordinary requests; hand everything else to ``app``."""

    def __init__(self, app: ASGIApp, gateway: Gateway) -> None:
        self.app = app
        self.gateway = gateway

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = _route(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if handler is None:
            await self.app(scope, receive, send)
            return
        token, is_json = token_and_json(scope)
        caller = self.gateway.auth.identify(token)
        if caller is None or (scope["method"] == "POST" and not is_json):
            await self.app(scope, receive, send)  # 401, 415-ish cases: the framework's answer
            return
        body, tail = await _read_body(receive) if scope["method"] == "POST" else (b"", None)
        if tail is not None:
            return  # the client left, or the body limit already answered 413
        try:
            response = await handler(self.gateway, caller, body, scope["path"])
            if response is None:
                # Replay: the framework's 422 (or whatever it answers) is the contract.
                await self.app(scope, _replay(body, receive), send)
                return
        except HTTPException as exc:
            response = Response(
                dumps({"detail": exc.detail}),
                status_code=exc.status_code,
                headers=exc.headers,
                media_type="application/json",
            )
        await response(scope, receive, send)


async def _read_body(receive: Receive) -> tuple[bytes, Message | None]:
    """The whole body, and the message that ended it early (a disconnect) if any."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
