"""Commands for a running gateway: ``approvals list|answer`` and ``runs list|show|cancel`` (docs/cli.md).

They talk HTTP to ``multiplex up`` (``--url``/``--token``, see ``_client``);
nothing here opens a supervisor.
"""

from __future__ import annotations

import enum
import json
import sys
import urllib.parse
from typing import Annotated, Any

import typer

from multiplex.cli._human import local_time
from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json, versioned
from multiplex.cli._state import state_of
from multiplex.cli._tables import Kind, NoTruncOpt, print_table
from multiplex.cli.policy._asked import asked_line, runs_in, why_words
from multiplex.cli.remote._client import GatewayClient, GatewayError, client_for
from multiplex.cli.remote._complete import complete_approval, complete_run
from multiplex.cli.remote._ids import by_prefix

__all__ = ["answer_approval", "approval_line", "list_approvals", "run_id_of", "runs_app"]

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


def _text(value: Any) -> str:
    return "-" if value is None else str(value)


def _who(a: dict[str, Any]) -> str:
    return (
        f"{a.get('approval_id')}  {a.get('profile')}/{a.get('session_id')}  "
        f"run {a.get('run_id') or '-'}"
    )


def approval_line(event: str, a: dict[str, Any]) -> str:
    """One line per approval event: the request (where, why), the answer, or why it ended."""
    if event == "approval.resolved":
        by = a.get("by") or "someone"
        tail = f"answered {a.get('choice') or '?'} by {by}"
        if a.get("reason"):
            tail += f": {a['reason']}"
    elif event == "approval.cancelled":
        tail = f"{a.get('outcome') or 'cancelled'}: {a.get('cause') or 'no reason given'}"
    else:
        tail = (
            f"{a.get('command')}  [asked {asked_line(a)}; in {runs_in(a)}; "
            f"asks because: {why_words(a)}]"
        )
    return f"{event:<18} {_who(a)}  {tail}"


def list_approvals(
    ctx: typer.Context,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new requests and answers.")
    ] = False,
    as_json: JsonOpt = False,
    no_trunc: NoTruncOpt = False,
) -> None:
    """Open approval requests of the running gateway: who asked and when, where, why, until when.

    Example: multiplex approvals list --follow
    """
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
    columns = [
        ("id", Kind.ID),
        ("profile", Kind.ID),
        ("session", Kind.ID),
        ("run", Kind.ID),
        ("command", Kind.WRAP),
        ("asked", Kind.WRAP),
        ("runs in", Kind.WRAP),
        ("asks because", Kind.WRAP),
        ("expires", Kind.ID),
    ]
    table = [
        [
            a["approval_id"],
            a["profile"],
            a["session_id"],
            _text(a.get("run_id")),
            a["command"],
            asked_line(a),
            runs_in(a),
            why_words(a),
            local_time(a.get("expires_at")),
        ]
        for a in rows
    ]
    print_table(columns, table, no_trunc=no_trunc)


def _follow_approvals(events: Any, as_json: bool) -> None:
    for name, data in events:
        if not name.startswith("approval."):
            continue
        if as_json:
            sys.stdout.write(json.dumps(versioned({"event": name, **data})) + "\n")
        else:
            sys.stdout.write(approval_line(name, data) + "\n")
        sys.stdout.flush()


def answer_approval(
    ctx: typer.Context,
    approval_id: Annotated[
        str,
        typer.Argument(
            metavar="ID",
            help="The approval_id, or any unique prefix of it.",
            autocompletion=complete_approval,
        ),
    ],
    choice: Annotated[AnswerChoice, typer.Argument(help="once, session, always or deny.")],
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (sent to the agent with deny).")
    ] = None,
) -> None:
    """Answer an open approval request of the running gateway.

    Example: multiplex approvals answer ap-7d6f once
    """
    client = client_for(state_of(ctx))
    rows = client.get("/v1/approvals")
    approval_id = (
        by_prefix(approval_id, [a["approval_id"] for a in rows], "approval") or approval_id
    )
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
    no_trunc: NoTruncOpt = False,
) -> None:
    """Runs this token may see, newest first.

    Example: multiplex runs list --status failed --no-trunc
    """
    client = client_for(state_of(ctx))
    rows = client.get("/v1/runs", status=[s.value for s in status] if status else None, limit=limit)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no runs")
        return
    columns = [
        ("run", Kind.ID),
        ("profile", Kind.ID),
        ("session", Kind.ID),
        ("status", Kind.ID),
        ("created", Kind.ID),
        ("commands", Kind.TEXT),
        ("approval", Kind.ID),
        ("error", Kind.TEXT),
    ]
    table = [
        [
            r["run_id"],
            r["profile"],
            r["session_id"],
            r["status"],
            local_time(r["created_at"]),
            "; ".join(r["commands"]),
            _text(r.get("pending_approval")),
            _text(r.get("error")),
        ]
        for r in rows
    ]
    print_table(columns, table, no_trunc=no_trunc)


def run_id_of(client: GatewayClient, given: str) -> str:
    """The run ``given`` names: a whole run id, or a unique prefix of a run this token sees.

    An id none of the newest 1000 runs starts is sent as given (the gateway may know it).
    """
    rows = client.get("/v1/runs", limit=1000)
    return by_prefix(given, [r["run_id"] for r in rows], "run") or given


def _indented(label: str, text: str) -> None:
    if text:
        typer.echo(f"     {label}:")
        for line in text.rstrip("\n").splitlines():
            typer.echo(f"       {line}")


def _dropped(result: dict[str, Any]) -> None:
    # docs/gateway.md#output-kept-and-dropped: the output is not kept, and why.
    if result.get("output_dropped"):
        typer.echo(f"     output: {result['output_dropped']}")


RunIdArg = Annotated[
    str,
    typer.Argument(
        metavar="RUN_ID",
        help="The run id, or any unique prefix of it.",
        autocompletion=complete_run,
    ),
]


@runs_app.command("show", cls=Command)
def show_run(ctx: typer.Context, run_id: RunIdArg, as_json: JsonOpt = False) -> None:
    """One run: status, each command's result (stdout, stderr: redacted), its open approval.

    Example: multiplex runs show run-mY-X
    """
    client = client_for(state_of(ctx))
    run_id = run_id_of(client, run_id)
    run = client.get(f"/v1/runs/{urllib.parse.quote(run_id, safe='')}")
    if as_json:
        emit_json(run)
        return
    typer.echo(f"run:      {run['run_id']}  ({run['status']})")
    typer.echo(f"profile:  {run['profile']}  session {run['session_id']}  context {run['context']}")
    typer.echo(f"created:  {local_time(run['created_at'])}")
    if run.get("finished_at"):
        typer.echo(f"finished: {local_time(run['finished_at'])}")
    for index, result in enumerate(run["results"], 1):
        if "decision" not in result:  # a code cell (docs/kernels.md#over-http)
            typer.echo(f"  {index}. cell: {result.get('outcome')}")
            _indented("stdout", result.get("stdout") or "")
            _indented("stderr", result.get("stderr") or "")
            _dropped(result)
            continue
        d = result["decision"]
        code = result.get("exit_code")
        if code is not None:
            ran = f"exit {code}"
        elif result.get("error"):
            ran = f"did not run: {result['error']}"
        else:
            ran = "did not run"
        typer.echo(f"  {index}. {result['command']}")
        typer.echo(f"     {d['outcome']} ({d['cause']}; {d['decided_by']}); {ran}")
        _indented("stdout", result.get("stdout") or "")
        _indented("stderr", result.get("stderr") or "")
        _dropped(result)
    pending = run.get("pending_approval")
    if pending:
        typer.echo(f"waiting:  {approval_line('approval', {**pending, 'run_id': run_id})}")
    if run.get("error"):
        typer.echo(f"error:    {run['error']}")


@runs_app.command("cancel", cls=Command)
def cancel_run(ctx: typer.Context, run_id: RunIdArg) -> None:
    """Cancel a run: its pending approval ends "run cancelled"; later commands never run.

    Example: multiplex runs cancel run-mY-X
    """
    client = client_for(state_of(ctx))
    run_id = run_id_of(client, run_id)
    out = client.post(f"/v1/runs/{urllib.parse.quote(run_id, safe='')}/cancel")
    typer.echo(f"run {out['run_id']}: {out['status']} ({out['cancelled']} approvals cancelled)")
