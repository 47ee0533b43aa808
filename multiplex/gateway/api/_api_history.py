"""``GET /v1/runs``, ``GET /v1/decisions`` and its summary: what happened, with filters and paging (docs/gateway.md)."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from multiplex.approval import DamagedRecord, DecisionFilter, fatigue_of, read_decisions
from multiplex.approval.records._history import each_decision
from multiplex.gateway.api._models import (
    DecisionRow,
    DecisionsPage,
    FatigueOut,
    RunStatus,
    RunSummary,
)
from multiplex.gateway.http._auth import Caller
from multiplex.gateway.http._http import ERRORS, GatewayDep

__all__ = ["router"]

router = APIRouter()
OutcomeName = Literal["approved", "denied", "cancelled", "timeout", "blocked"]


@router.get("/v1/runs", response_model=list[RunSummary], responses=ERRORS)
async def list_runs(
    caller: Caller,
    gw: GatewayDep,
    status: Annotated[list[RunStatus] | None, Query()] = None,
    profile: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[dict[str, Any]]:
    """Runs this token may see, newest first (live ones and the last finished ones kept)."""
    rows: list[dict[str, Any]] = []
    for run in reversed(gw.runs.all()):
        if not caller.sees(run.profile) or (profile is not None and run.profile != profile):
            continue
        with run.lock:
            if status and run.status not in status:
                continue
            pending = run.pending
            rows.append(
                {
                    "run_id": run.run_id,
                    "profile": run.profile,
                    "session_id": run.session_id,
                    "context": run.context,
                    "status": run.status,
                    "created_at": run.created_at,
                    "finished_at": run.finished_at,
                    "commands": list(run.commands),
                    "pending_approval": pending.id if pending is not None else None,
                    "error": run.error,
                }
            )
    return rows[offset : offset + limit]


@router.get(
    "/v1/decisions",
    response_model=list[DecisionRow] | DecisionsPage,
    response_model_exclude_unset=True,  # a field absent from the file stays absent
    responses=ERRORS,
)
async def decisions(
    caller: Caller,
    gw: GatewayDep,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    profile: Annotated[str | None, Query(max_length=200)] = None,
    outcome: Annotated[list[OutcomeName] | None, Query()] = None,
    session: Annotated[str | None, Query(max_length=200)] = None,
    context: Annotated[str | None, Query(max_length=40)] = None,
    since: Annotated[
        float | None, Query(description="Epoch seconds: only records at or after.")
    ] = None,
    until: Annotated[float | None, Query(description="Epoch seconds: only records before.")] = None,
    with_damaged: Annotated[
        bool, Query(description="Answer {decisions, damaged}: the lines that are not records.")
    ] = False,
) -> list[dict[str, Any]] | dict[str, Any]:
    """Decisions from every visible profile's ``decisions.jsonl``, newest first.

    The same fields as the file (``session_id`` repeats ``session``); ``offset``
    and ``limit`` page through them. Lines met on the way that are not records
    are never skipped in silence (docs/operations.md#a-full-disk): their count is
    in ``X-Damaged-Records``, and ``with_damaged=true`` lists each (profile, file, line).
    """
    homes = {
        name: p.home
        for name, p in gw.sup.profiles.items()
        if caller.sees(name) and (profile is None or name == profile)
    }
    keep = DecisionFilter(
        outcome=frozenset(outcome) if outcome else None,
        session=session,
        context=context,
        since=since,
        until=until,
    )
    damaged: list[DamagedRecord] = []
    rows = await asyncio.to_thread(
        read_decisions, homes, keep=keep, limit=limit, offset=offset, damaged=damaged
    )
    for row in rows:
        row["session_id"] = row.get("session", "")
    if damaged:
        response.headers["X-Damaged-Records"] = str(len(damaged))
    if with_damaged:
        return {"decisions": rows, "damaged": [d.as_dict() for d in damaged]}
    return rows


@router.get("/v1/decisions/summary", response_model=list[FatigueOut], responses=ERRORS)
async def decisions_summary(
    caller: Caller,
    gw: GatewayDep,
    profile: Annotated[
        list[Annotated[str, Query(max_length=200)]] | None,
        Query(description="These profiles (repeatable); none: every visible profile."),
    ] = None,
    since: Annotated[
        float | None, Query(description="Epoch seconds: only records at or after.")
    ] = None,
) -> list[dict[str, Any]]:
    """Each visible profile's fatigue figures (docs/approvals.md#fatigue), from its records."""
    wanted = set(profile[:1000]) if profile else None
    homes = {
        name: p.home
        for name, p in gw.sup.profiles.items()
        if caller.sees(name) and (wanted is None or name in wanted)
    }
    keep = DecisionFilter(since=since)
    # Counted as read, one record at a time: a long history is never held whole.
    figures = await asyncio.to_thread(
        lambda: fatigue_of(
            each_decision(homes, keep=keep), now=time.time(), since=since, profiles=homes
        )
    )
    return [figures[name].as_dict() for name in sorted(figures)]
