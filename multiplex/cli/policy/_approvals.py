"""``multiplex approvals test`` and ``multiplex exec`` (docs/approvals.md, docs/cli.md).

``exec`` exit codes (docs/cli.md#exit-codes): the command's own code when it
ran; when it did not: 3 blocked, 4 denied, 5 cancelled or timed out.
"""

from __future__ import annotations

import shlex
import sys
from typing import Annotated, Any

import typer

from multiplex.approval import TerminalPrompter
from multiplex.approval._decision import Outcome
from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.cli.remote._client import client_for
from multiplex.cli.remote._complete import ProfileOpt
from multiplex.scopes import ContextKind

__all__ = [
    "EXIT_BLOCKED",
    "EXIT_CANCELLED",
    "EXIT_DENIED",
    "NOT_RUN",
    "approvals_app",
    "exec_command",
    "join_command",
]

EXIT_BLOCKED = 3
EXIT_DENIED = 4
EXIT_CANCELLED = 5
EXIT_INTERRUPTED = 130  # Ctrl-C with no prompt open: the shell's 128 + SIGINT
NOT_RUN: dict[str, int] = {
    Outcome.BLOCKED: EXIT_BLOCKED,
    Outcome.DENIED: EXIT_DENIED,
    Outcome.CANCELLED: EXIT_CANCELLED,
    Outcome.TIMEOUT: EXIT_CANCELLED,
}

approvals_app = typer.Typer(
    cls=Group,
    help="The approval gate; the pending requests of a running gateway.",
    no_args_is_help=True,
)

CommandArg = Annotated[list[str], typer.Argument(help="The command line (after --).")]


def join_command(words: list[str]) -> str:
    """The command line of ``-- WORDS``: one word is a whole line; several are joined as argv."""
    return words[0] if len(words) == 1 else shlex.join(words)


@approvals_app.command("test", cls=Command)
def test_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    command: CommandArg,
    context: Annotated[
        ContextKind, typer.Option("--context", help="Where the turn comes from.")
    ] = ContextKind.API,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            help="Decide as in this session of the running gateway (its grants and yolo).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What the gate would do, step by step. Pure: writes nothing, asks nobody.

    Session grants live in the running gateway: with --session the question is
    put to it (POST /v1/approvals/test), otherwise to this config, read afresh.

    Example: multiplex approvals test -p default -- rm -rf ./build
    """
    line = join_command(command)
    verdict: dict[str, Any]
    if session is not None:
        body = {"profile": profile, "command": line, "context": context.value}
        verdict = client_for(state_of(ctx)).post(
            "/v1/approvals/test", {**body, "session_id": session}
        )
    else:
        sup = state_of(ctx).supervisor(profile)
        try:
            verdict = sup.test(profile, line, context=context).as_dict()
        finally:
            sup.close()
    if as_json:
        emit_json(verdict)
        return
    _print_verdict(verdict)


def _print_verdict(verdict: dict[str, Any]) -> None:
    typer.echo(f"profile:  {verdict['profile']}")
    typer.echo(f"command:  {verdict['command']}")
    for argv in verdict["segments"]:
        typer.echo(f"segment:  {shlex.join(argv)}")
    for number, step in enumerate(verdict["trace"], 1):
        detail = f"  {step['detail']}" if step["detail"] else ""
        typer.echo(f"  {number:>2}. {step['step']:<11} {step['result']:<9}{detail}")
    for danger in verdict["dangers"]:  # docs/approvals.md#what-a-prompt-shows
        typer.echo(f"danger:   {danger['pattern']}: {danger['segment']}")
    by = verdict["decided_by"] or "-"
    rule = f"  rule: {verdict['rule']}" if verdict["rule"] else ""
    typer.echo(f"verdict:  {verdict['outcome']} ({verdict['cause']}; decided by {by}){rule}")


class _Live:
    """The command's output on this terminal as it comes (redacted lines), kept to compare."""

    def __init__(self) -> None:
        self.seen = {"stdout": "", "stderr": ""}

    def __call__(self, stream: str, text: str) -> None:
        self.seen[stream] += text
        out = sys.stdout if stream == "stdout" else sys.stderr
        out.write(text)
        out.flush()

    def rest(self, stream: str, final: str) -> str:
        """What ``final`` holds beyond what was shown (a note added before or after)."""
        seen = self.seen[stream]
        if not seen:
            return final
        return final.replace(seen, "", 1) if seen in final else ""


def exec_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    command: CommandArg,
    session: Annotated[
        str, typer.Option("--session", help="Session id (grants live per session).")
    ] = "cli",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON at the end, no live output.")
    ] = False,
) -> None:
    """Gate and run one command in the profile's scope, asking on the terminal.

    The output is shown as the command writes it (redacted). Exit code: the
    command's own when it ran; 3 blocked, 4 denied, 5 cancelled or timed out,
    1 approved but it could not start.

    Example: multiplex exec -p default -- ls -la
    """
    live = None if as_json else _Live()
    sup = state_of(ctx).supervisor(profile)
    prompter = TerminalPrompter(sys.stdin, sys.stderr)
    try:
        sup.gate.set_prompter(prompter)
        # docs/approvals.md#the-terminal-prompt: Ctrl-C at the prompt cancels it, recorded;
        # before the decision is recorded it waits for it, and the command does not start.
        with prompter.interrupts() as keys:
            result = sup.run(
                join_command(command),
                profile=profile,
                session=session,
                context="interactive",
                on_output=live,
                on_decided=keys.decided,
            )
    except KeyboardInterrupt:  # after the decision, or while the command ran
        sys.stderr.write("multiplex: interrupted\n")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        sup.close()
    if as_json:
        emit_json(result.as_dict())
    else:
        assert live is not None
        sys.stdout.write(live.rest("stdout", result.stdout))
        sys.stderr.write(live.rest("stderr", result.stderr))
    decision = result.decision
    if decision.outcome is Outcome.CANCELLED and decision.cause == "interrupted":
        sys.stderr.write(
            "multiplex: cancelled: interrupted at the approval prompt; the command did not run\n"
        )
        raise typer.Exit(EXIT_CANCELLED)
    if not decision.approved:
        # The person at the terminal answered: told what happened, not what an agent should do.
        said = (
            f"multiplex: denied ({decision.cause}): the command did not run"
            if decision.outcome is Outcome.DENIED
            else decision.message
        )
        sys.stderr.write(said + "\n")
        raise typer.Exit(NOT_RUN.get(decision.outcome, EXIT_BLOCKED))
    code = result.exit_code
    if code is None:
        if result.error:
            sys.stderr.write(f"multiplex: did not run: {result.error}\n")
        raise typer.Exit(1)  # approved, but it could not start or was stopped
    # Killed by a signal (a timeout kills the group): the shell's 128+N convention.
    raise typer.Exit(128 + (-code) if code < 0 else code)
