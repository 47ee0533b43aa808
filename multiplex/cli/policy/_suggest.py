"""``multiplex approvals suggest -p NAME -- CMD`` (docs/approvals.md#suggestions, docs/cli.md).

What an "always" answer to CMD would save, and the narrower or wider rules it
could save instead, each with how many of the profile's recorded decisions it
would have matched: the same list the prompt shows.
"""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from multiplex.approval import suggest
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.cli.policy._allowlist import workdir
from multiplex.cli.remote._complete import ProfileOpt
from multiplex.profiles import AllowlistStore

__all__ = ["suggest_rules"]


def suggest_rules(
    ctx: typer.Context,
    profile: ProfileOpt,
    command: Annotated[
        list[str], typer.Argument(help="The command (after --), or one quoted line.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The rules an "always" answer to CMD could save, exact first, with their match counts.

    Example: multiplex approvals suggest -p default
    """
    home = state_of(ctx).home_of(profile)
    line = command[0] if len(command) == 1 else shlex.join(command)
    found = suggest(line, home, workdir(AllowlistStore(home / "config.yaml")), name=profile)
    if not found:
        typer.echo(f'multiplex: error: {line!r}: nothing an "always" answer could save', err=True)
        raise typer.Exit(2)
    if as_json:
        emit_json({"command": line, "suggestions": [s.as_dict() for s in found]})
        return
    for item in found:
        typer.echo(item.line().strip())
