"""An approval request as an operator reads it on the CLI: when and by whom it was asked,
what it would run in, and why it asks (docs/approvals.md#what-a-prompt-shows)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from multiplex.approval.waiting._why import network_words

__all__ = ["asked_line", "runs_in", "why_words"]


def asked_line(a: dict[str, Any], now: float | None = None) -> str:
    """``18:40:12, 4 s ago, by the alpha profile's token (api)``: when, who, the context."""
    created = a.get("created_at")
    if not isinstance(created, int | float):
        when = "-"
    else:
        clock = dt.datetime.fromtimestamp(created).astimezone().strftime("%H:%M:%S")
        ago = max(0, int((time.time() if now is None else now) - created))
        when = f"{clock}, {ago} s ago"
    who = f", by {a['asked_by']}" if a.get("asked_by") else ""
    context = f" ({a['context']})" if a.get("context") else ""
    return f"{when}{who}{context}"


def runs_in(a: dict[str, Any]) -> str:
    """``/srv/w (local); sandbox bwrap; network: …``: where and in what it would run."""
    where = f"{a.get('cwd') or '-'} ({a.get('backend') or '?'})"
    if not a.get("sandbox") and not a.get("network"):
        return where  # a gateway from before these fields
    network = network_words(str(a.get("network") or ""), list(a.get("egress_allow") or []))
    return f"{where}; sandbox {a.get('sandbox') or '?'}; network: {network}"


def why_words(a: dict[str, Any]) -> str:
    """Why it asks in words (``because``), then every other danger with its segment."""
    dangers = a.get("dangers") or []
    because = a.get("because") or a.get("reason") or "a human must approve"
    if len(dangers) < 2:
        return str(because)
    others = ", ".join(f"{d.get('pattern')} in {d.get('segment')!r}" for d in dangers)
    return f"{because} (every danger: {others})"
