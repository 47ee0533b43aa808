"""Whole documents redacted before they leave the process (Redis, the run journal)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["redacted"]

_PLAIN = (int, float, bool, type(None))  # nothing to redact: kept as they are


def redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with every string in it redacted (dicts, lists and tuples walked)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        # A document's fields are mostly strings and numbers: those without a call each.
        return {
            k: redact(v) if type(v) is str else v if type(v) in _PLAIN else redacted(v, redact)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redacted(v, redact) for v in value]
    return value
