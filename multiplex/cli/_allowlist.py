"""``multiplex allowlist list|add|remove -p NAME`` (docs/allowlist.md, docs/cli.md).

These go through the same lock and reconcile as a running supervisor, so they
are safe while it runs; its watcher picks the change up.
"""

from __future__ import annotations

from typing import Annotated

import typer

from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.profiles import AllowlistStore
from multiplex.shell import parse_rule

allowlist_app = typer.Typer(
    cls=Group, help="The permanent allowlist of a profile.", no_args_is_help=True
)

ProfileOpt = Annotated[str, typer.Option("-p", "--profile", help="Profile name.")]


def _store(ctx: typer.Context, name: str) -> AllowlistStore:
    home = state_of(ctx).home_of(name)
    return AllowlistStore(home / "config.yaml")


@allowlist_app.command("list", cls=Command)
def list_rules(
    ctx: typer.Context,
    profile: ProfileOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The rules on disk (sorted); an entry that does not parse is marked, and exit 1.

    ``--json`` lists the rules that allow something; each invalid entry is one
    line on stderr naming its file and line (docs/allowlist.md#invalid-entries).
    """
    store = _store(ctx, profile)
    invalid = {entry.text: entry for entry in store.invalid()}
    rules = sorted(store.rules())
    if as_json:
        emit_json([rule for rule in rules if rule not in invalid])
    else:
        for rule in rules:
            entry = invalid.get(rule)
            typer.echo(
                rule if entry is None else f"{rule}    INVALID: {entry.error} (allows nothing)"
            )
    for entry in invalid.values():
        typer.echo(
            f"multiplex: error: {entry.where(store.config_path)}: command_allowlist: "
            f"{entry.error}; it allows nothing",
            err=True,
        )
    if invalid:
        raise typer.Exit(1)


@allowlist_app.command("add", cls=Command)
def add_rule(ctx: typer.Context, profile: ProfileOpt, rule: str) -> None:
    """Add a rule (written under the cross-process lock)."""
    parse_rule(rule)  # a bad rule is exit 2 before anything is touched
    store = _store(ctx, profile)
    store.grant(rule)
    if store.unsaved:
        raise typer.Exit(_unsaved(store))
    typer.echo(f"added: {rule}")


@allowlist_app.command("remove", cls=Command)
def remove_rule(ctx: typer.Context, profile: ProfileOpt, rule: str) -> None:
    """Revoke a rule: an explicit revocation, effective at once in a running supervisor."""
    store = _store(ctx, profile)
    if rule.strip() not in store.rules():
        typer.echo(
            f"multiplex: error: {store.config_path}: command_allowlist: no rule {rule!r}", err=True
        )
        raise typer.Exit(2)
    store.revoke(rule)
    if rule.strip() in store.rules():
        raise typer.Exit(_unsaved(store))
    typer.echo(f"removed: {rule}")


def _unsaved(store: AllowlistStore) -> int:
    typer.echo(
        f"multiplex: error: {store.config_path}: command_allowlist: could not write the file (see the warning above)",
        err=True,
    )
    return 2
