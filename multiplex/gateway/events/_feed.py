"""The recent-decisions ring buffer behind ``GET /v1/decisions`` (dashboard).

Fed by the gate's ``post_approval_response`` hook (every ASKED approval,
answered or not, from any caller) and by each finished run command whose
decision nobody was asked about (rule, policy, smart), so no decision is
listed twice. In memory only: ``<home>/logs/decisions.jsonl`` is the record.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from multiplex.approval._decision import DecidedBy, Decision

__all__ = ["ASKED", "DecisionFeed"]

# decided_by values that mean a human was asked (docs/approvals.md#outcomes-and-what-the-agent-sees): the hook reports those.
ASKED = frozenset({DecidedBy.USER, DecidedBy.NOBODY})


class DecisionFeed:
    """The newest ``size`` decisions, thread-safe."""

    def __init__(self, redact: Callable[[str], str], size: int = 500) -> None:
        self._redact = redact
        self._rows: deque[dict[str, Any]] = deque(maxlen=size)
        self._lock = threading.Lock()

    def add(self, decision: Decision, *, profile: str, session: str, command: str) -> None:
        """Record one decision; ``command`` and the cause are redacted here."""
        row = {
            "ts": time.time(),
            "profile": profile,
            "session_id": session,
            "command": self._redact(command),
            "outcome": decision.outcome.value,
            "cause": self._redact(decision.cause),
            "decided_by": decision.decided_by.value,
            "rule": decision.rule,
        }
        with self._lock:
            self._rows.append(row)

    def hook(
        self, decision: Decision, *, choice: str, profile: str, session: str, command: str
    ) -> None:
        """A ``post_approval_response`` hook (docs/approvals.md#records)."""
        self.add(decision, profile=profile, session=session, command=command)

    def recent(self, limit: int, visible: Callable[[str], bool]) -> list[dict[str, Any]]:
        """Up to ``limit`` rows the caller may see, newest first."""
        with self._lock:
            rows = list(self._rows)
        out: list[dict[str, Any]] = []
        for row in reversed(rows):
            if visible(row["profile"]):
                out.append(row)
                if len(out) >= limit:
                    break
        return out
