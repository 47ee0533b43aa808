"""Human output: values as an operator reads them (no Python reprs, local ISO times)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rich.markup import escape

__all__ = ["local_time", "plain"]


def local_time(epoch: float | None) -> str:
    """An epoch as local ISO 8601 to the second (``-`` for none)."""
    if epoch is None:
        return "-"
    return dt.datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def plain(value: Any, *, empty: str = "-") -> str:
    """``on``/``off`` for booleans, ``-`` for none, lists joined; markup escaped."""
    if value is None:
        return empty
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list | tuple):
        return escape(", ".join(str(v) for v in value)) if value else "[]"
    if isinstance(value, dict):
        return escape(", ".join(f"{k}={v}" for k, v in value.items())) if value else "{}"
    return escape(str(value))
