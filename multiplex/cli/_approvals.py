"""``multiplex approvals test`` and ``multiplex exec`` (docs/approvals.md, docs/cli.md)."""

from __future__ import annotations

import shlex
import sys
from typing import Annotated

import typer

from multiplex.approval._prompt import TerminalPrompter
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of

approvals_app = typer.Typer(help="The approval gate.", no_args_is_help=True)

ProfileOpt = Annotated[str, typer.Option("-p", "--profile", help="Profile name.")]
CommandArg = Annotated[list[str], typer.Argument(help="The command line (after --).")]


def _line(words: list[str]) -> str:
    # One word is taken as a whole command line; several are joined as argv.
    return words[0] if len(words) == 1 else shlex.join(words)


@approvals_app.command("test")
def test_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    command: CommandArg,
    context: Annotated[
        str, typer.Option("--context", help="interactive|gateway|api|cron|webhook|single_query")
    ] = "api",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What the gate would do, step by step. Pure: writes nothing, asks nobody."""
    sup = state_of(ctx).supervisor(profile)
    try:
        verdict = sup.test(profile, _line(command), context=context)
    finally:
        sup.close()
    if as_json:
        emit_json(verdict.as_dict())
        return
    typer.echo(f"profile:  {verdict.profile}")
    typer.echo(f"command:  {verdict.command}")
    for argv in verdict.segments:
        typer.echo(f"segment:  {shlex.join(argv)}")
    for number, step in enumerate(verdict.trace, 1):
        detail = f"  {step.detail}" if step.detail else ""
        typer.echo(f"  {number:>2}. {step.step:<11} {step.result:<9}{detail}")
    by = verdict.decided_by.value if verdict.decided_by else "-"
    rule = f"  rule: {verdict.rule}" if verdict.rule else ""
    typer.echo(f"verdict:  {verdict.outcome.value} ({verdict.cause}; decided by {by}){rule}")


def exec_command(
    ctx: typer.Context,
    profile: ProfileOpt,
    command: CommandArg,
    session: Annotated[
        str, typer.Option("--session", help="Session id (grants live per session).")
    ] = "cli",
) -> None:
    """Gate and run one command in the profile's scope, asking on the terminal."""
    sup = state_of(ctx).supervisor(profile)
    try:
        sup.gate.set_prompter(TerminalPrompter(sys.stdin, sys.stderr))
        result = sup.run(_line(command), profile=profile, session=session, context="interactive")
    finally:
        sup.close()
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if not result.decision.approved:
        sys.stderr.write(result.decision.message + "\n")
        raise typer.Exit(1)
    raise typer.Exit(0 if result.exit_code == 0 else (result.exit_code or 1))
