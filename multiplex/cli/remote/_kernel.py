"""``multiplex kernel run|list|reset``: session kernels from the command line (docs/kernels.md#from-the-cli).

Kernels live in the running gateway (``multiplex up``), so state persists from
one ``kernel run`` to the next; the CLI finds it through ``--url``,
``$MULTIPLEX_URL`` or the URL file ``up`` writes, with ``--token``,
``$MULTIPLEX_TOKEN`` or the admin token file. With no gateway running,
``kernel run`` runs the cell in a kernel of its own that ends with the command
(and says so).

The gateway client is the CLI's own (:mod:`multiplex.cli.remote._client`).

``kernel run`` exit codes: 0 ok (and ``sys.exit()``), 1 the cell raised or its
kernel died, 2 refused, 5 timed out or cancelled.
"""

from __future__ import annotations

import sys
import time
import urllib.parse
from typing import Annotated, Any

import typer

from multiplex._errors import MultiplexError
from multiplex.approval import TerminalPrompter
from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json
from multiplex.cli._state import CliState, state_of
from multiplex.cli._tables import Kind, print_table
from multiplex.cli.remote._client import GatewayClient, GatewayError, client_for
from multiplex.cli.remote._complete import ProfileOpt

__all__ = ["kernel_app"]

kernel_app = typer.Typer(
    cls=Group, help="Session kernels: persistent Python per session.", no_args_is_help=True
)
_EXIT = {"ok": 0, "exited": 0, "error": 1, "died": 1, "refused": 2, "timeout": 5, "cancelled": 5}
_WAIT = 20.0  # seconds per POST wait; longer cells are then polled


def _print_cell(cell: dict[str, Any]) -> None:
    sys.stdout.write(cell.get("stdout") or "")
    sys.stderr.write(cell.get("stderr") or "")
    if cell.get("result") is not None:
        sys.stdout.write(f"{cell['result']}\n")
    error = cell.get("error")
    if error:
        sys.stderr.write((error.get("traceback") or f"{error['ename']}: {error['evalue']}") + "\n")
    if cell.get("notice"):
        sys.stderr.write(f"multiplex: {cell['notice']}\n")


def _via_gateway(gw: GatewayClient, body: dict[str, Any]) -> dict[str, Any]:
    run = gw.post("/v1/runs", {**body, "wait": _WAIT})
    run_id, told = run["run_id"], None
    while run.get("status") not in ("completed", "failed", "cancelled"):
        pending = run.get("pending_approval")
        if pending and pending["approval_id"] != told:
            told = pending["approval_id"]
            sys.stderr.write(
                f"multiplex: waiting for approval {told} of run {run_id}: {pending['command']}\n"
            )
        time.sleep(0.2)
        run = gw.get(f"/v1/runs/{urllib.parse.quote(run_id)}")
    if not run["results"]:
        raise MultiplexError(f"run {run_id} {run['status']}: {run.get('error') or 'no cell ran'}")
    result: dict[str, Any] = run["results"][0]
    return result


def _in_process(state: CliState, profile: str, body: dict[str, Any]) -> dict[str, Any]:
    sys.stderr.write("multiplex: no running gateway: this kernel ends with the command\n")
    sup = state.supervisor(profile)
    try:
        sup.gate.set_prompter(TerminalPrompter(sys.stdin, sys.stderr))
        cell = sup.execute_code(
            body["code"][0],
            profile=profile,
            session=body["session_id"],
            context="interactive",
            reset=body["reset"],
        )
    finally:
        sup.close()
    return {"index": 0, **cell.as_dict()}


@kernel_app.command("run", cls=Command)
def run_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    code: Annotated[list[str], typer.Argument(help="The Python code (after --); - reads stdin.")],
    session: Annotated[
        str, typer.Option("--session", help="Session id (one kernel each).")
    ] = "cli",
    reset: Annotated[
        bool, typer.Option("--reset", help="Discard the kernel's state first.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the cell result as JSON.")] = False,
) -> None:
    """Run one cell in the session's kernel; prints its output and the repr of its last expression.

    Example: multiplex kernel run -p research -- 'x = 1; x + 1'
    """
    state = state_of(ctx)
    text = sys.stdin.read() if code == ["-"] else " ".join(code)
    body = {"profile": profile, "session_id": session, "code": [text], "reset": reset}
    try:
        cell = _via_gateway(client_for(state), body)
    except GatewayError as exc:
        if exc.status is not None:
            raise  # a gateway answered and refused: never run it elsewhere instead
        cell = _in_process(state, profile, body)
    if as_json:
        emit_json(cell)
    else:
        _print_cell(cell)
    raise typer.Exit(_EXIT.get(str(cell.get("outcome")), 1))


@kernel_app.command("list", cls=Command)
def list_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The live kernels of the running gateway that this token may see (a table, or --json).

    Example: multiplex kernel list --json
    """
    rows: list[dict[str, Any]] = client_for(state_of(ctx)).get("/v1/kernels")
    if as_json:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no live kernels")
        return
    now = time.time()
    columns = [
        ("profile", Kind.ID),
        ("session", Kind.ID),
        ("pid", Kind.ID),
        ("memory", Kind.ID),
        ("idle", Kind.ID),
        ("kernel", Kind.ID),
    ]
    table = [
        [
            r["profile"],
            r["session"] + "".join(f" < {c}" for c in r["chain"]),
            str(r["pid"] or "-"),
            f"{r['memory_bytes'] / 1048576:.1f}M",
            "busy" if r["busy"] else f"{max(0, int(now - r['last_used']))}s",
            r["kernel_id"],
        ]
        for r in rows
    ]
    print_table(columns, table, no_trunc=True)


@kernel_app.command("reset", cls=Command)
def reset_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    session: Annotated[str, typer.Option("--session", help="Session id.")] = "cli",
) -> None:
    """End the session's kernel in the running gateway: the next cell starts fresh.

    Example: multiplex kernel reset -p research --session s1
    """
    path = f"/v1/kernels/{urllib.parse.quote(profile, safe='')}/{urllib.parse.quote(session, safe='')}/reset"
    ended = client_for(state_of(ctx)).post(path)["ended"]
    typer.echo(f"{profile}/{session}: {ended} kernel(s) ended")
