"""Commands for a running gateway: ``approvals list|answer`` and ``runs list|show|cancel`` (docs/cli.md).

They talk HTTP to ``multiplex up`` (``--url``/``--token``, see ``_client``);
nothing here opens a supervisor.
"""

from __future__ import annotations

import enum
import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from multiplex.cli._client import GatewayError, client_for
from multiplex.cli._human import local_time, plain
from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json, versioned
from multiplex.cli._state import state_of

__all__ = ["answer_approval", "list_approvals", "runs_app"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


class AnswerChoice(enum.StrEnum):
    ONCE = "once"
    SESSION = "session"
    ALWAYS = "always"
    DENY = "deny"


class RunStatusChoice(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting_for_approval"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


def _console() -> Console:
    return Console(width=max(120, Console().width))


def _why(a: dict[str, Any]) -> str:
    # docs/approvals.md#what-a-prompt-shows: every danger with the part of the line it is in.
    dangers = [f"{d.get('pattern')} in {d.get('segment')!r}" for d in a.get("dangers") or []]
    names = dangers or [p["name"] for p in a.get("patterns") or []]
    step = a.get("step") or "ask"
    return f"{step}: {', '.join(names)}" if names else f"{step}: {a.get('reason') or ''}"


def _approval_line(event: str, a: dict[str, Any]) -> str:
    where = f"{a.get('cwd') or '-'} ({a.get('backend') or '?'})"
    return (
        f"{event:<18} {a.get('approval_id')}  {a.get('profile')}/{a.get('session_id')}  "
        f"run {a.get('run_id') or '-'}  {a.get('command')}  [{where}; {_why(a)}]"
    )


def list_approvals(
    ctx: typer.Context,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new requests and answers.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Open approval requests of the running gateway: where, why, until when."""
    client = client_for(state_of(ctx))
    if follow:
        _follow_approvals(client.events("/v1/events"), as_json)
        return
    rows = client.get("/v1/approvals")
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no open approval requests")
        return
    table = Table("id", "profile", "session", "run", "command", "where", "why", "expires")
    for a in rows:
        table.add_row(
            a["approval_id"],
            a["profile"],
            a["session_id"],
            plain(a.get("run_id")),
            plain(a["command"]),
            plain(f"{a.get('cwd') or '-'} ({a.get('backend') or '?'})"),
            plain(_why(a)),
            local_time(a.get("expires_at")),
        )
    _console().print(table)


def _follow_approvals(events: Any, as_json: bool) -> None:
    for name, data in events:
        if not name.startswith("approval."):
            continue
        if as_json:
            sys.stdout.write(json.dumps(versioned({"event": name, **data})) + "\n")
        else:
            sys.stdout.write(_approval_line(name, data) + "\n")
        sys.stdout.flush()


def answer_approval(
    ctx: typer.Context,
    approval_id: Annotated[str, typer.Argument(metavar="ID", help="The approval_id.")],
    choice: Annotated[AnswerChoice, typer.Argument(help="once, session, always or deny.")],
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (sent to the agent with deny).")
    ] = None,
) -> None:
    """Answer an open approval request of the running gateway."""
    client = client_for(state_of(ctx))
    rows = client.get("/v1/approvals")
    request = next((a for a in rows if a["approval_id"] == approval_id), None)
    if request is None:
        open_ids = [a["approval_id"] for a in rows]
        hint = f"; open: {', '.join(open_ids)}" if open_ids else "; none is open"
        raise GatewayError(f"no open approval request {approval_id!r}{hint}")
    if not request.get("run_id"):
        raise GatewayError(
            f"approval {approval_id!r} belongs to no gateway run: answer it where the turn runs"
        )
    body: dict[str, Any] = {"approval_id": approval_id, "choice": choice.value}
    if reason:
        body["reason"] = reason
    client.post(f"/v1/runs/{request['run_id']}/approval", body)
    typer.echo(
        f"answered {approval_id}: {choice.value} ({request['profile']}: {request['command']})"
    )


runs_app = typer.Typer(cls=Group, help="Runs of the running gateway.", no_args_is_help=True)


@runs_app.command("list", cls=Command)
def list_runs(
    ctx: typer.Context,
    status: Annotated[
        list[RunStatusChoice] | None, typer.Option("--status", help="Only runs in this status.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 100,
    as_json: JsonOpt = False,
) -> None:
    """Runs this token may see, newest first."""
    client = client_for(state_of(ctx))
    rows = client.get("/v1/runs", status=[s.value for s in status] if status else None, limit=limit)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no runs")
        return
    table = Table("run", "profile", "session", "status", "created", "commands", "approval")
    for r in rows:
        table.add_row(
            r["run_id"],
            r["profile"],
            r["session_id"],
            r["status"],
            local_time(r["created_at"]),
            plain("; ".join(r["commands"])),
            plain(r.get("pending_approval")),
        )
    _console().print(table)


@runs_app.command("show", cls=Command)
def show_run(ctx: typer.Context, run_id: str, as_json: JsonOpt = False) -> None:
    """One run: status, each gated command's result, its open approval."""
    run = client_for(state_of(ctx)).get(f"/v1/runs/{run_id}")
    if as_json:
        emit_json(run)
        return
    typer.echo(f"run:      {run['run_id']}  ({run['status']})")
    typer.echo(f"profile:  {run['profile']}  session {run['session_id']}  context {run['context']}")
    typer.echo(f"created:  {local_time(run['created_at'])}")
    if run.get("finished_at"):
        typer.echo(f"finished: {local_time(run['finished_at'])}")
    for index, result in enumerate(run["results"], 1):
        d = result["decision"]
        code = result.get("exit_code")
        ran = f"exit {code}" if code is not None else "did not run"
        typer.echo(f"  {index}. {result['command']}")
        typer.echo(f"     {d['outcome']} ({d['cause']}; {d['decided_by']}); {ran}")
    pending = run.get("pending_approval")
    if pending:
        typer.echo(f"waiting:  {_approval_line('approval', {**pending, 'run_id': run_id})}")
    if run.get("error"):
        typer.echo(f"error:    {run['error']}")


@runs_app.command("cancel", cls=Command)
def cancel_run(ctx: typer.Context, run_id: str) -> None:
    """Cancel a run: its pending approval ends "run cancelled"; later commands never run."""
    out = client_for(state_of(ctx)).post(f"/v1/runs/{run_id}/cancel")
    typer.echo(f"run {out['run_id']}: {out['status']} ({out['cancelled']} approvals cancelled)")
