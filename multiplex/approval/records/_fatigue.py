"""Fatigue figures of a profile, from its decision records (docs/approvals.md#fatigue).

How often people are asked and how they answer: prompts per hour, the share
of answers that approved, the median time to answer, and answers given within
:data:`~multiplex._metrics.FAST_ANSWER_S` of the prompt (a prompt approved that
fast was hardly read). A prompt is a record the gate asked a human about: one
answered (``decided_by: user``) or that nobody answered (``timeout``,
``cancelled``). The same figures are counted live as Prometheus metrics.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from multiplex._metrics import FAST_ANSWER_S

__all__ = ["Fatigue", "fatigue_of"]


@dataclass(frozen=True, slots=True)
class Fatigue:
    """One profile's figures over ``hours`` (from its first counted record, or ``since``, to now)."""

    profile: str
    prompts: int
    answered: int
    approved: int
    unanswered: int
    fast_answers: int
    median_answer_s: float | None
    hours: float

    @property
    def prompts_per_hour(self) -> float:
        return self.prompts / self.hours if self.hours > 0 else float(self.prompts)

    @property
    def approved_share(self) -> float | None:
        return self.approved / self.answered if self.answered else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "prompts": self.prompts,
            "prompts_per_hour": round(self.prompts_per_hour, 3),
            "answered": self.answered,
            "approved": self.approved,
            "approved_share": None
            if self.approved_share is None
            else round(self.approved_share, 3),
            "unanswered": self.unanswered,
            "median_answer_s": self.median_answer_s,
            "fast_answers": self.fast_answers,
            "fast_answer_s": FAST_ANSWER_S,
            "hours": round(self.hours, 3),
        }


def _asked(row: Mapping[str, Any]) -> bool:
    if row.get("kind") is not None:  # egress refusals, answer records: not a decision
        return False
    return row.get("decided_by") == "user" or row.get("outcome") in ("timeout", "cancelled")


def fatigue_of(
    rows: Iterable[Mapping[str, Any]],
    *,
    now: float,
    since: float | None = None,
    profiles: Iterable[str] = (),
) -> dict[str, Fatigue]:
    """The figures of every profile in ``profiles`` or with records in ``rows`` (any order)."""
    first: dict[str, float] = {name: now if since is None else since for name in profiles}
    waits: dict[str, list[float]] = {name: [] for name in first}
    counts: dict[str, list[int]] = {
        name: [0, 0, 0] for name in first
    }  # prompts, approved, unanswered
    for row in rows:
        profile, ts = row.get("profile"), row.get("ts")
        if not isinstance(profile, str) or not isinstance(ts, int | float):
            continue
        first[profile] = min(first.get(profile, ts), ts)
        figures = counts.setdefault(profile, [0, 0, 0])
        waits.setdefault(profile, [])
        if not _asked(row):
            continue
        figures[0] += 1
        if row.get("decided_by") != "user":
            figures[2] += 1
            continue
        if row.get("outcome") == "approved":
            figures[1] += 1
        waited = row.get("waited_ms")
        waits[profile].append(waited / 1000 if isinstance(waited, int | float) else 0.0)
    out = {}
    for profile, (prompts, approved, unanswered) in counts.items():
        answered = waits[profile]
        start = since if since is not None else first[profile]
        out[profile] = Fatigue(
            profile=profile,
            prompts=prompts,
            answered=len(answered),
            approved=approved,
            unanswered=unanswered,
            fast_answers=sum(1 for s in answered if s < FAST_ANSWER_S),
            median_answer_s=round(statistics.median(answered), 3) if answered else None,
            hours=max(now - start, 0.0) / 3600,
        )
    return out
