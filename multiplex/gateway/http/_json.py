"""JSON encoding for responses, events and log lines: orjson, encoded once."""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps"]


def dumps(data: Any) -> bytes:
    """UTF-8 JSON bytes by orjson; the standard library for what orjson refuses.

    orjson refuses integers beyond 64 bits; such a value falls back rather than
    failing a request or dropping a log line. Unknown types become ``str``.
    """
    try:
        return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(data, ensure_ascii=False, default=str).encode()
