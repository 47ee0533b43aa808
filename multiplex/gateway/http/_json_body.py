"""Request bodies under ``/v1/`` are JSON, or 400 before any route reads them (docs/gateway.md#request-bodies).

:class:`JsonBody` is pure ASGI middleware in front of the fast path and the
framework: a body that is not UTF-8, not JSON, uses ``NaN``/``Infinity``
(not JSON either) or gives one key twice in an object is answered 400 with a
one-line ``detail``. A repeated key would otherwise be read as its last value
by one parser and perhaps its first by another (a proxy, an audit tool): the
gateway refuses to guess. The detail names the key (cut short) and never
quotes the body. An empty body passes: the route says what it needs.

:func:`document_body_errors` writes that 400 into the OpenAPI schema of every
operation that takes a body (and what its 422 covers), so the schema lists
every answer a client can get.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from multiplex.gateway.http._json import send_json

__all__ = ["BAD_BODY", "INVALID_BODY", "JsonBody", "document_body_errors", "refusal"]

_PREFIX = "/v1/"
BAD_BODY: dict[str, Any] = {
    "description": (
        "The body is not JSON: not UTF-8, malformed, NaN or Infinity,"
        " or an object that gives one key twice (the detail names it)."
    ),
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"detail": {"type": "string"}},
                "required": ["detail"],
            }
        }
    },
}

INVALID_BODY = (
    "The body is JSON but does not validate: a field missing, unknown, out of range or of"
    " another type (strict: no boolean, and no number for a string), or a command holding a"
    " control character other than tab and newline. Each error's type, loc and msg; never the input."
)


class _Refused(ValueError):
    """Why a body is not taken (one line, never the body itself)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Refused(f"request body: key {key[:64]!r} is given twice in one object")
        found[key] = value
    return found


def _no_constant(name: str) -> Any:
    raise _Refused(f"request body is not JSON: {name} is not a JSON number")


# One decoder for every request: json.loads with these hooks builds a new one each call.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_no_constant)


def refusal(body: bytes) -> str | None:
    """Why ``body`` is refused (400), or None when it is JSON without a repeated key."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"request body is not UTF-8 (byte {exc.start})"
    try:
        _DECODER.decode(text)
    except _Refused as exc:
        return str(exc)
    except json.JSONDecodeError as exc:  # its message says where, never what
        return f"request body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return "request body is not JSON: nested too deep"
    return None


class JsonBody:
    """Refuse a ``/v1/`` request body that is not JSON with 400; replay a good one to ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(_PREFIX):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # The client left (or the body limit answered 413): the app sees that.
                await self.app(scope, _replay(b"".join(chunks), message, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        why = refusal(body) if body else None
        if why is not None:
            await _send_400(send, why)
            return
        await self.app(scope, _replay(body, None, receive), send)


async def _send_400(send: Send, detail: str) -> None:
    await send_json(send, 400, json.dumps({"detail": detail}).encode())


def _replay(body: bytes, last: Message | None, receive: Receive) -> Receive:
    """The body read, in one message (then ``last``, if the body ended early), then ``receive``."""
    queue: list[Message] = [{"type": "http.request", "body": body, "more_body": last is not None}]
    if last is not None:
        queue.append(last)

    async def again() -> Message:
        if queue:
            return queue.pop(0)
        return await receive()

    return again


def document_body_errors(app: FastAPI) -> None:
    """Have ``app``'s OpenAPI schema list :data:`BAD_BODY` as the 400 of every operation
    that takes a body, and say what its 422 covers."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()  # built once and kept by FastAPI: this edits it once
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                if isinstance(operation, dict) and "requestBody" in operation:
                    responses = operation.setdefault("responses", {})
                    responses.setdefault("400", BAD_BODY)
                    if "422" in responses:
                        responses["422"]["description"] = INVALID_BODY
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
