"""``multiplex policy diff``: a proposed config.yaml against the profile's history (docs/allowlist.md#policy-diff).

Exit 0 when no recorded command would be decided otherwise, 1 when one would
(for CI before a config change is merged), 2 for a usage or config error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from multiplex._errors import ConfigError
from multiplex.approval import DamagedRecord, DecisionFilter, read_decisions
from multiplex.cli._human import plain
from multiplex.cli._options import Command, Group
from multiplex.cli._output import versioned
from multiplex.cli._state import state_of
from multiplex.cli.policy._decisions import parse_since, report_damaged
from multiplex.supervision import policy_diff

__all__ = ["policy_app"]

policy_app = typer.Typer(
    cls=Group, help="A profile's policy against its recorded decisions.", no_args_is_help=True
)


@policy_app.command("diff", cls=Command)
def diff(
    ctx: typer.Context,
    profile: Annotated[str, typer.Option("-p", "--profile", help="Profile name.")],
    proposed: Annotated[
        Path,
        typer.Option(
            "--proposed", metavar="FILE", help="The proposed config.yaml.", dir_okay=False
        ),
    ],
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="WHEN", help="Only decisions since (30d, 2h, ISO time)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Every recorded command whose verdict the proposed config would change; exit 1 if any.

    Example: multiplex policy diff -p research --proposed new-config.yaml --since 30d
    """
    state = state_of(ctx)
    home = state.home_of(profile)
    if not proposed.is_file():
        raise ConfigError("no such file (--proposed)", file=proposed)
    keep = DecisionFilter(since=parse_since(since) if since else None)
    damaged: list[DamagedRecord] = []
    rows = read_decisions({profile: home}, keep=keep, limit=sys.maxsize, damaged=damaged)
    for found in reversed(damaged):
        report_damaged(state.config_path.parent, found)
    changes = policy_diff(profile, home, proposed, rows, state.config())
    if as_json:
        sys.stdout.write(json.dumps(versioned({"changes": [c.as_dict() for c in changes]})) + "\n")
    elif not changes:
        typer.echo(
            f"no recorded command of {profile} would be decided otherwise ({len(rows)} records)"
        )
    else:
        table = Table("command", "context", "was", "would be", "why", "count")
        for change in changes:
            table.add_row(
                plain(change.command),
                change.context,
                change.was,
                change.would_be,
                plain(change.cause),
                str(change.count),
            )
        Console(soft_wrap=True).print(table)
    if changes:
        raise typer.Exit(1)
