"""Response and request bodies of the history, session, identity and reload routes (docs/gateway.md).

Split from ``_models`` (the bodies of runs and approvals), which re-exports them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from multiplex.gateway.api._models import (  # defined before it imports this
    DangerOut,
    Name,
    RunStatus,
    _In,
)

__all__ = [
    "DamagedOut",
    "DecisionRow",
    "DecisionsPage",
    "FatigueOut",
    "PolicyChangeOut",
    "PolicyDiffIn",
    "PolicyDiffOut",
    "ReloadOut",
    "RevokeIn",
    "RevokeOut",
    "RunSummary",
    "SessionOut",
    "WhoAmI",
]


class FatigueOut(BaseModel):
    """One profile's fatigue figures (``GET /v1/decisions/summary``, docs/approvals.md#fatigue)."""

    profile: str
    prompts: int
    prompts_per_hour: float
    answered: int
    approved: int
    approved_share: float | None
    unanswered: int
    median_answer_s: float | None
    fast_answers: int
    fast_answer_s: float
    hours: float


class SessionOut(BaseModel):
    """One session of a profile that holds grants or yolo (``GET /v1/sessions``)."""

    profile: str
    session_id: str
    grants: list[str]
    yolo: bool


class RevokeIn(_In):
    """``POST /v1/sessions/{profile}/{session}/revoke``: one grant, or (no rule) all and yolo."""

    rule: Name | None = None


class RevokeOut(BaseModel):
    revoked: bool


class WhoAmI(BaseModel):
    role: Literal["admin", "profile"]
    profile: str | None


class DecisionRow(BaseModel):
    """One record of ``<home>/logs/decisions.jsonl`` (the same fields; ``session_id`` = ``session``)."""

    ts: float
    profile: str
    session: str = ""
    session_id: str = ""
    turn: str | None = None
    context: str | None = None
    command: str
    outcome: str
    cause: str
    decided_by: str
    rule: str | None = None
    epoch: int | None = None
    waited_ms: int | None = None
    choice: str | None = None
    answered_by: str | None = None
    dangers: list[DangerOut] = Field(default_factory=list)
    # docs/operations.md#what-survives-a-crash: "egress", or "answer" (a human's "always"
    # answer, kept before its rule was written; outcome "answered"); absent for the gate's own.
    kind: str | None = None
    approval_id: str | None = None


class DamagedOut(BaseModel):
    """A line of a ``decisions.jsonl`` that is not a record (docs/operations.md#a-full-disk)."""

    profile: str
    file: str
    line: int
    why: str


class DecisionsPage(BaseModel):
    """``GET /v1/decisions?with_damaged=true``: the page and the damaged lines met reading it."""

    decisions: list[DecisionRow]
    damaged: list[DamagedOut]


class RunSummary(BaseModel):
    """One row of ``GET /v1/runs``."""

    run_id: str
    profile: str
    session_id: str
    context: str
    status: RunStatus
    created_at: float
    finished_at: float | None
    commands: list[str]
    pending_approval: str | None = None
    error: str | None = None  # why a failed run failed (docs/gateway.md#runs)


class ReloadOut(BaseModel):
    """``POST /v1/admin/reload``: what the reload of ``multiplex.yaml`` did."""

    ok: bool
    error: str | None = None
    added: list[str]
    removed: list[str]
    profiles: int
    restart_required: list[str] = []  # changed keys that wait for a restart (docs/operations.md)
    # Files found being written: read once whole (docs/configuration.md#validation).
    waiting: list[str] = []


class PolicyDiffIn(_In):
    """``POST /v1/policy/diff``: a proposed config.yaml (its text) against the profile's records."""

    profile: Name
    proposed: Annotated[str, Field(max_length=1 << 20)]
    since: float | None = None  # epoch seconds: only records at or after


class PolicyChangeOut(BaseModel):
    """One recorded command the proposed config would decide otherwise (docs/allowlist.md#policy-diff)."""

    command: str
    context: str
    was: Literal["approved", "blocked", "ask"]
    would_be: Literal["approved", "blocked", "ask"]
    cause: str
    count: int


class PolicyDiffOut(BaseModel):
    changes: list[PolicyChangeOut]
    records: int
