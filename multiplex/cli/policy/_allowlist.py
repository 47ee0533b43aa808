"""``multiplex allowlist list|add|remove -p NAME`` (docs/allowlist.md, docs/cli.md).

These go through the same lock and reconcile as a running supervisor, so they
are safe while it runs; its watcher picks the change up.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.cli.remote._complete import ProfileOpt
from multiplex.profiles import (
    AllowlistStore,
    GrantText,
    binding_digest,
    entry_rule,
    grant_state,
    load_config,
    parse_expiry,
)
from multiplex.scopes import resolve_cwd
from multiplex.shell import parse_rule

allowlist_app = typer.Typer(
    cls=Group, help="The permanent allowlist of a profile.", no_args_is_help=True
)


def _store(ctx: typer.Context, name: str) -> AllowlistStore:
    home = state_of(ctx).home_of(name)
    return AllowlistStore(home / "config.yaml")


def workdir(store: AllowlistStore) -> Path:
    """The profile's cwd, which bound files' relative names are under (docs/allowlist.md#bindings)."""
    home = store.config_path.parent
    settings = load_config(store.config_path).settings
    return resolve_cwd(settings.terminal, home, os.environ.get("HOME")) or home / "workspace"


def _shown(grant: dict[str, Any]) -> str:
    """One line of ``allowlist list`` for a grant: its rule, conditions and state."""
    parts = [grant["rule"]]
    if grant["expires"] is not None:
        parts.append(f"expires {grant['expires']}")
    if grant["uses_left"] is not None:
        parts.append(f"{grant['uses_left']} uses left")
    for bound in grant["bind"]:
        parts.append(f"bound to {bound['file']} ({bound['state']})")
    state = grant["state"].upper() if grant["state"] != "active" else "active"
    return "    ".join(parts) + f"    [{state}]"


@allowlist_app.command("list", cls=Command)
def list_rules(
    ctx: typer.Context,
    profile: ProfileOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The rules on disk (sorted); an entry that does not parse is marked, and exit 1.

    ``--json`` lists the rules that allow something; each invalid entry is one
    line on stderr naming its file and line (docs/allowlist.md#invalid-entries).

    Example: multiplex allowlist list -p default
    """
    store = _store(ctx, profile)
    invalid = {entry.text: entry for entry in store.invalid()}
    now, base = time.time(), workdir(store)
    rules = sorted(store.rules(), key=lambda t: t.rule if isinstance(t, GrantText) else t)
    shown: list[Any] = [
        grant_state(rule, now, base) if isinstance(rule, GrantText) else rule
        for rule in rules
        if rule not in invalid
    ]
    if as_json:
        emit_json(shown)
    else:
        for rule in rules:
            entry = invalid.get(rule)
            if entry is not None:
                typer.echo(f"{rule}    INVALID: {entry.error} (allows nothing)")
            elif isinstance(rule, GrantText):
                typer.echo(_shown(grant_state(rule, now, base)))
            else:
                typer.echo(rule)
    for entry in invalid.values():
        typer.echo(
            f"multiplex: error: {entry.where(store.config_path)}: command_allowlist: "
            f"{entry.error}; it allows nothing",
            err=True,
        )
    if invalid:
        raise typer.Exit(1)


@allowlist_app.command("add", cls=Command)
def add_rule(
    ctx: typer.Context,
    profile: ProfileOpt,
    rule: str,
    expires: Annotated[
        str | None,
        typer.Option(
            "--expires", help="Stop allowing after 8h/30m/2d/1w, or at a date/time (UTC)."
        ),
    ] = None,
    uses: Annotated[
        int | None, typer.Option("--uses", min=1, help="Allow this many commands, then stop.")
    ] = None,
    bind: Annotated[
        list[str] | None,
        typer.Option("--bind", help="Hold only while FILE (under the profile's cwd) is unchanged."),
    ] = None,
) -> None:
    """Add a rule (written under the cross-process lock), optionally a grant with conditions.

    Example: multiplex allowlist add -p default 'npm run test:*'
    """
    parse_rule(rule)  # a bad rule is exit 2 before anything is touched
    try:
        until = parse_expiry(expires) if expires is not None else None
    except ValueError as exc:
        raise typer.Exit(_refused(f"--expires: {exc}")) from None
    if until is not None and until.timestamp() <= time.time():
        raise typer.Exit(_refused(f"--expires: {expires!r} is already past"))
    store = _store(ctx, profile)
    files = _bindings(store, bind or [])
    store.grant(rule, expires=until, uses=uses, bind=files)
    if store.unsaved:
        raise typer.Exit(_unsaved(store))
    said = [f"until {until:%Y-%m-%dT%H:%M:%SZ}"] if until else []
    said += [f"{uses} uses"] if uses else []
    said += [f"bound to {name} ({digest})" for name, digest in files.items()]
    typer.echo(f"added: {rule}" + (f" ({', '.join(said)})" if said else ""))


def _bindings(store: AllowlistStore, names: list[str]) -> dict[str, str]:
    """Each ``--bind`` file's name as kept (relative to the profile's cwd when inside it) and digest."""
    if not names:
        return {}
    base = workdir(store)
    files: dict[str, str] = {}
    for name in names:
        path = Path(os.path.normpath(name if os.path.isabs(name) else base / name))
        kept = str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
        digest = binding_digest(kept, base)
        if digest is None:
            why = "is not a regular file that can be read (links are not followed)"
            raise typer.Exit(_refused(f"--bind: {path} {why}"))
        files[kept] = digest
    return files


@allowlist_app.command("remove", cls=Command)
def remove_rule(ctx: typer.Context, profile: ProfileOpt, rule: str) -> None:
    """Revoke a rule: an explicit revocation, effective at once in a running supervisor.

    Example: multiplex allowlist remove -p default 'ls *'
    """
    store = _store(ctx, profile)
    if rule.strip() not in {entry_rule(text) for text in store.rules()}:
        typer.echo(
            f"multiplex: error: {store.config_path}: command_allowlist: no rule {rule!r}", err=True
        )
        raise typer.Exit(2)
    store.revoke(rule)
    if rule.strip() in {entry_rule(text) for text in store.rules()}:
        raise typer.Exit(_unsaved(store))
    typer.echo(f"removed: {rule}")


def _refused(why: str) -> int:
    typer.echo(f"multiplex: error: {why}", err=True)
    return 2


def _unsaved(store: AllowlistStore) -> int:
    typer.echo(
        f"multiplex: error: {store.config_path}: command_allowlist: could not write the file (see the warning above)",
        err=True,
    )
    return 2
