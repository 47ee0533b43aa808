"""``multiplex decisions``: the decision history in every profile's ``decisions.jsonl`` (docs/cli.md#decisions)."""

from __future__ import annotations

import datetime as dt
import enum
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from multiplex._errors import RoutingError
from multiplex._metrics import FAST_ANSWER_S
from multiplex.approval import (
    DamagedRecord,
    DecisionFilter,
    Fatigue,
    fatigue_of,
    follow_decisions,
    read_decisions,
)
from multiplex.cli._human import local_time, plain
from multiplex.cli._output import versioned
from multiplex.cli._state import did_you_mean, state_of

__all__ = ["decisions", "parse_since", "report_damaged"]

_AGE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class OutcomeChoice(enum.StrEnum):
    APPROVED = "approved"
    DENIED = "denied"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    BLOCKED = "blocked"


def parse_since(text: str, now: float | None = None) -> float:
    """An age (``30m``, ``2h``, ``1d``) or an ISO date/time (local unless it says) as epoch seconds."""
    text = text.strip()
    age = _AGE.fullmatch(text)
    if age:
        return (now if now is not None else time.time()) - float(age[1]) * _UNIT[age[2]]
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is neither an age (30m, 2h, 1d) nor an ISO date or time",
            param_hint="--since",
        ) from None
    return (when if when.tzinfo else when.astimezone()).timestamp()


def decisions(
    ctx: typer.Context,
    profile: Annotated[
        list[str] | None, typer.Option("-p", "--profile", help="Only this profile (repeatable).")
    ] = None,
    outcome: Annotated[
        list[OutcomeChoice] | None,
        typer.Option("--outcome", help="Only this outcome (repeatable)."),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", metavar="WHEN", help="An age (2h, 1d) or ISO time.")
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="Only this session.")] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="At most this many, the newest.")
    ] = 50,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Then keep printing new decisions.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary", help="Per profile: prompts per hour, share approved, time to answer."
        ),
    ] = False,
) -> None:
    """Decision history from every profile's decisions.jsonl, oldest first.

    Example: multiplex decisions -p research --since 2h --outcome denied
    """
    state = state_of(ctx)
    homes = state.config().homes()
    if profile:
        unknown = [p for p in profile if p not in homes]
        if unknown:
            raise RoutingError(
                f"no profile named {unknown[0]!r} is served by {state.config_path}"
                + did_you_mean(unknown[0], list(homes))
            )
        homes = {name: homes[name] for name in profile}
    keep = DecisionFilter(
        outcome=frozenset(o.value for o in outcome) if outcome else None,
        session=session,
        since=parse_since(since) if since else None,
    )
    damaged: list[DamagedRecord] = []
    if summary:
        if follow or outcome or session:
            raise typer.BadParameter(
                "--summary counts every prompt: it takes -p and --since only",
                param_hint="--summary",
            )
        rows = read_decisions(homes, keep=keep, limit=sys.maxsize, damaged=damaged)
        for found in reversed(damaged):
            report_damaged(state.config_path.parent, found)
        _summary(fatigue_of(rows, now=time.time(), since=keep.since, profiles=homes), as_json)
        return
    rows = list(reversed(read_decisions(homes, keep=keep, limit=limit, damaged=damaged)))
    report = _reporter(state.config_path.parent)
    for found in reversed(damaged):  # in file order, as the rows are shown
        report(found)
    if as_json:
        for row in rows:
            sys.stdout.write(json.dumps(versioned(row), ensure_ascii=False) + "\n")
    elif rows or not follow:
        _table(rows)
    if not follow:
        return
    sys.stdout.flush()
    wanted = set(homes)

    def current() -> dict[str, Any]:
        # Homes added while following are followed too (unless -p narrowed it).
        now = state.config().homes()
        return {n: h for n, h in now.items() if not profile or n in wanted}

    for row in follow_decisions(current, keep=keep, damaged=report):
        if as_json:
            sys.stdout.write(json.dumps(versioned(row), ensure_ascii=False) + "\n")
        else:
            sys.stdout.write(_line(row) + "\n")
        sys.stdout.flush()


def _summary(figures: dict[str, Fatigue], as_json: bool) -> None:
    """docs/approvals.md#fatigue: one row per profile."""
    if as_json:
        rows = [versioned(figures[name].as_dict()) for name in sorted(figures)]
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table(
        "profile",
        "prompts",
        "per hour",
        "approved",
        "median answer",
        f"< {FAST_ANSWER_S:g} s",
        "unanswered",
    )
    for name in sorted(figures):
        f = figures[name]
        share = "-" if f.approved_share is None else f"{f.approved_share:.0%} of {f.answered}"
        median = "-" if f.median_answer_s is None else f"{f.median_answer_s:.1f} s"
        table.add_row(
            name,
            str(f.prompts),
            f"{f.prompts_per_hour:.1f}",
            share,
            median,
            str(f.fast_answers),
            str(f.unanswered),
        )
    Console(soft_wrap=True).print(table)


def report_damaged(base: Path, found: DamagedRecord) -> None:
    """Print ``<file>:<line>: damaged record (<why>): skipped`` on stderr (docs/cli.md#decisions)."""
    shown = os.path.relpath(found.path, base) if found.path.is_absolute() else str(found.path)
    sys.stdout.flush()
    sys.stderr.write(found.message(shown) + "\n")
    sys.stderr.flush()


def _reporter(base: Path) -> Callable[[DamagedRecord], None]:
    return lambda found: report_damaged(base, found)


def _line(row: dict[str, Any]) -> str:
    rule = f" rule: {row['rule']}" if row.get("rule") else ""
    return (
        f"{local_time(row.get('ts'))}  {row.get('profile')}/{row.get('session')}  "
        f"{row.get('outcome'):<9} {row.get('command')}  ({row.get('cause')}; "
        f"{row.get('decided_by')}){rule}"
    )


def _table(rows: list[dict[str, Any]]) -> None:
    if not rows:
        typer.echo("no decisions recorded")
        return
    table = Table("when", "profile", "session", "command", "outcome", "cause", "by", "rule")
    for row in rows:
        table.add_row(
            local_time(row.get("ts")),
            plain(row.get("profile")),
            plain(row.get("session")),
            plain(row.get("command")),
            plain(row.get("outcome")),
            plain(row.get("cause")),
            plain(row.get("decided_by")),
            plain(row.get("rule"), empty=""),
        )
    Console(width=max(120, Console().width)).print(table)
