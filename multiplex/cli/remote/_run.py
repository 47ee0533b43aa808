"""``multiplex run -p NAME [--session S] [--context C] -- COMMAND...``: a run of the running gateway (docs/cli.md#run).

It submits ``POST /v1/runs`` to the gateway ``approvals list`` would talk to,
follows ``GET /v1/runs/{id}/events``: the output as it comes
(``command.output``), a prompt's id and where to answer it, and exits with the
command's own status (docs/cli.md#exit-codes for one that did not run). Output
the stream could not deliver (a late connection, a reconnect) is printed from
the finished run, never twice.
"""

from __future__ import annotations

import sys
import urllib.parse
from typing import Annotated, Any

import typer

from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.cli.policy._approvals import EXIT_BLOCKED, EXIT_CANCELLED, NOT_RUN, join_command
from multiplex.cli.remote._client import GatewayClient, GatewayError, client_for
from multiplex.cli.remote._complete import ProfileOpt
from multiplex.cli.remote._remote import approval_line
from multiplex.scopes import ContextKind

__all__ = ["EXIT_NOT_STARTED", "exit_code_of", "run_command"]

EXIT_NOT_STARTED = 1  # approved, but it could not start or did not finish (killed, cancelled)


def exit_code_of(result: dict[str, Any] | None, status: str) -> int:
    """The exit status for a run's last result (a ``results[]`` row of docs/gateway.md)."""
    if result is None:
        return EXIT_CANCELLED if status == "cancelled" else EXIT_NOT_STARTED
    outcome = result["decision"]["outcome"]
    if outcome != "approved":
        return NOT_RUN.get(str(outcome), EXIT_BLOCKED)
    code = result.get("exit_code")
    if code is None:
        return EXIT_NOT_STARTED
    return 128 + (-code) if code < 0 else int(code)  # a signal: the shell's 128+N


class _Follower:
    """Prints one run's events; what the stream missed comes from the finished run."""

    def __init__(self, client: GatewayClient, run_id: str, quiet: bool) -> None:
        self.client, self.run_id, self.quiet = client, run_id, quiet
        self.streamed: dict[tuple[int, str], str] = {}
        self.missed: set[tuple[int, str]] = set()
        self.finished: set[int] = set()
        self.told: set[str] = set()

    def _write(self, stream: str, text: str) -> None:
        if text and not self.quiet:
            out = sys.stdout if stream == "stdout" else sys.stderr
            out.write(text)
            out.flush()

    def output(self, data: dict[str, Any]) -> None:
        key = (int(data["index"]), str(data["stream"]))
        if key not in self.streamed and data.get("offset"):
            self.missed.add(key)  # connected after it began: the finished run has it whole
        text = str(data.get("text") or "")
        self.streamed[key] = self.streamed.get(key, "") + text
        if key not in self.missed:
            self._write(key[1], text)

    def command_finished(self, index: int, result: dict[str, Any]) -> None:
        if index in self.finished:
            return
        self.finished.add(index)
        for stream in ("stdout", "stderr"):
            final = str(result.get(stream) or "")
            seen = self.streamed.get((index, stream), "")
            if (index, stream) in self.missed or not seen:
                rest = final
            else:  # notes the gateway adds before or after (a kill, a sandbox warning)
                rest = final.replace(seen, "", 1) if seen in final else ""
            self._write(stream, rest)
        decision = result.get("decision") or {}
        if decision.get("outcome") not in (None, "approved"):
            sys.stderr.write(f"multiplex: {decision.get('message') or decision.get('cause')}\n")
        if result.get("error"):
            sys.stderr.write(f"multiplex: did not run: {result['error']}\n")

    def approval(self, event: str, data: dict[str, Any]) -> None:
        approval_id = str(data.get("approval_id"))
        if event == "approval.request":
            if approval_id in self.told:
                return  # re-sent after a reconnect
            self.told.add(approval_id)
            sys.stderr.write(
                f"multiplex: waiting for approval {approval_id} ({data.get('command')}): answer "
                f"with `multiplex approvals answer {approval_id} once|session|always|deny` "
                f"or on the dashboard {self.client.url}/\n"
            )
        else:
            sys.stderr.write(f"multiplex: {approval_line(event, data)}\n")
        sys.stderr.flush()

    def follow(self) -> dict[str, Any]:
        """Print events until the run finished; its document."""
        path = f"/v1/runs/{urllib.parse.quote(self.run_id, safe='')}"
        while True:
            for name, data in self.client.events(path + "/events"):
                if name == "command.output":
                    self.output(data)
                elif name == "command.finished":
                    self.command_finished(int(data["index"]), data)
                elif name.startswith("approval."):
                    self.approval(name, data)
                elif name == "run.finished":
                    return self._end(data)
            run: dict[str, Any] = self.client.get(path)  # the stream dropped: finished?
            if run["status"] in ("completed", "failed", "cancelled"):
                return self._end(run)

    def _end(self, run: dict[str, Any]) -> dict[str, Any]:
        for index, result in enumerate(run.get("results") or []):
            self.command_finished(index, result)
        if run.get("error") and not any(r.get("error") for r in run.get("results") or []):
            sys.stderr.write(f"multiplex: run {self.run_id} {run['status']}: {run['error']}\n")
        return run


def run_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    command: Annotated[list[str], typer.Argument(help="The command line (after --).")],
    session: Annotated[
        str, typer.Option("--session", help="Session id (grants live per session).")
    ] = "cli",
    context: Annotated[
        ContextKind,
        typer.Option("--context", help="Where the turn comes from (not interactive)."),
    ] = ContextKind.GATEWAY,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the finished run as JSON, no live output.")
    ] = False,
) -> None:
    """Run one command through the running gateway, streaming its output as it comes.

    Exit code: the command's own; 3 blocked, 4 denied, 5 cancelled or timed out
    at the prompt, 1 approved but it could not start.

    Example: multiplex run -p research -- pytest -q
    """
    client = client_for(state_of(ctx))
    body = {
        "profile": profile,
        "session_id": session,
        "context": context.value,
        "commands": [join_command(command)],
    }
    run_id = str(client.post("/v1/runs", body)["run_id"])
    follower = _Follower(client, run_id, quiet=as_json)
    try:
        run = follower.follow()
    except KeyboardInterrupt:
        try:
            client.post(f"/v1/runs/{urllib.parse.quote(run_id, safe='')}/cancel")
            sys.stderr.write(f"multiplex: interrupted: run {run_id} cancelled\n")
        except GatewayError as exc:
            sys.stderr.write(f"multiplex: interrupted: run {run_id} not cancelled: {exc}\n")
        raise typer.Exit(130) from None
    if as_json:
        emit_json(run)
    results = run.get("results") or []
    raise typer.Exit(exit_code_of(results[-1] if results else None, str(run["status"])))
