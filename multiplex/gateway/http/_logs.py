"""Structured logs: one JSON object per line on stderr (docs/operations.md).

Gateway events (run started/finished, approval asked/answered, reload) are
logged through :func:`log_event` with fields that are already redacted; every
other record's message goes through the audit-grade redactor on its way out.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, TextIO

from multiplex.gateway.http._json import dumps

__all__ = ["EVENTS", "JsonLines", "install_json_logging", "log_event"]

EVENTS = logging.getLogger("multiplex.gateway.events")


def log_event(event: str, **fields: Any) -> None:
    """Log one gateway event as a JSON line (fields must already be redacted)."""
    if EVENTS.isEnabledFor(logging.INFO):
        EVENTS.info(event, extra={"mx_fields": fields})


class JsonLines(logging.Formatter):
    """Formats a record as ``{"ts", "level", "logger", "event", ...fields}``."""

    def __init__(self, redact: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "mx_fields", None)
        line: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if isinstance(fields, dict):
            line["event"] = record.getMessage()
            line.update(fields)
        else:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + self.formatException(record.exc_info)
            line["event"] = "log"
            line["message"] = self._redact(message) if self._redact else message
        return dumps(line).decode()


def install_json_logging(
    redact: Callable[[str], str] | None = None,
    *,
    stream: TextIO | None = None,
    level: int = logging.INFO,
) -> Callable[[], None]:
    """Send ``multiplex.*`` and ``uvicorn.*`` records to ``stream`` as JSON lines.

    Returns a function that removes what it installed.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLines(redact))
    touched: list[tuple[logging.Logger, int, bool]] = []
    for name in ("multiplex", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        touched.append((logger, logger.level, logger.propagate))
        if name == "uvicorn.error":
            logger.propagate = True  # handled once, by "uvicorn"
            continue
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False

    def remove() -> None:
        for logger, old_level, old_propagate in touched:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate

    return remove
