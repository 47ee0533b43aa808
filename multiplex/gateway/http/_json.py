"""JSON encoding for responses, events and log lines: orjson, encoded once."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

__all__ = ["dumps", "send_json"]


def dumps(data: Any) -> bytes:
    """UTF-8 JSON bytes by orjson; the standard library for what orjson refuses.

    orjson refuses integers beyond 64 bits; such a value falls back rather than
    failing a request or dropping a log line. Unknown types become ``str``.
    """
    try:
        return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        # (A lone surrogate, which orjson refuses too, is written as its JSON escape.)
        return json.dumps(data, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")


async def send_json(
    send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    status: int,
    body: bytes,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    """A whole JSON answer over raw ASGI: the layers in front of FastAPI refuse with it."""
    start = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": [*start, *headers]})
    await send({"type": "http.response.body", "body": body})
