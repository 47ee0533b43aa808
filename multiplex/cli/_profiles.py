"""``multiplex profiles list|show|init`` (docs/cli.md#profiles)."""

from __future__ import annotations

import enum
import os
import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.table import Table
from rich.tree import Tree

from multiplex._errors import ConfigError, RoutingError
from multiplex.cli._human import local_time, plain
from multiplex.cli._options import Command, Group
from multiplex.cli._output import emit_json
from multiplex.cli._state import CliState, state_of
from multiplex.cli._templates import config_template
from multiplex.cli.remote._complete import complete_profile
from multiplex.profiles import TOKEN_KEY
from multiplex.supervision import describe_profile, profile_row
from multiplex.supervision._homes import name_problem

__all__ = ["profiles_app"]

profiles_app = typer.Typer(cls=Group, help="Profile homes: list, show, init.", no_args_is_help=True)

# docs/operations.md#a-full-disk: "degraded" is a profile whose last record failed.
_STATUS = {"ok": "[green]ok[/green]", "degraded": "[bold yellow]degraded[/bold yellow]"}
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@profiles_app.command("list", cls=Command)
def list_profiles(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """One row per profile: name, home, backend, cwd, redaction, allowlist size, status, error.

    Exit 1 when any profile is broken (its row says why).

    Example: multiplex profiles list --json
    """
    state = state_of(ctx)
    sup = state.supervisor()
    try:
        rows = [profile_row(sup, p) for p in sup.profiles.values()]
    finally:
        sup.close()
    served = _last_good_served(state, rows)
    for row in rows:
        if row["name"] in served:
            row["serving_last_good_since"] = served[row["name"]]
    if as_json:
        emit_json(rows)
    else:
        table = Table(
            "name", "status", "backend", "sandbox", "cwd", "redact", "allowlist", "home", "error"
        )
        for row in rows:
            table.add_row(
                row["name"],
                _STATUS.get(row["status"], "[bold red]error[/bold red]"),
                plain(row["backend"]),
                plain(row["sandbox"]),
                plain(row["cwd"]),
                plain(row["redact_secrets"]),
                plain(row["allowlist_size"])
                + (f" (+{row['allowlist_invalid']} invalid)" if row["allowlist_invalid"] else ""),
                row["home"],
                plain(row["error"], empty=""),
            )
        console = Console(width=200)
        console.print(table)
        for row in rows:
            if row.get("serving_last_good_since"):  # docs/configuration.md#validation
                since = local_time(row["serving_last_good_since"])
                console.print(
                    f"warning: {row['name']}: serving the last good config since {since}"
                    " (the file is broken: fix it to apply it)",
                    markup=False,
                )
            if row["sandbox_warning"]:  # docs/execution.md#the-sandbox
                console.print(f"warning: {row['name']}: {row['sandbox_warning']}")
            if invalid := row["allowlist_invalid"]:  # docs/allowlist.md#invalid-entries
                entries = (
                    "1 allowlist entry allows"
                    if invalid == 1
                    else f"{invalid} allowlist entries allow"
                )
                console.print(
                    f"warning: {row['name']}: {entries} nothing"
                    f" (see: multiplex allowlist list -p {row['name']})"
                )
    if any(row["status"] != "ok" for row in rows):
        raise typer.Exit(1)


def _last_good_served(state: CliState, rows: list[dict[str, Any]]) -> dict[str, float]:
    """Broken profiles the running gateway still serves from their last good config.

    This command loads the files afresh (a broken one has no last good config
    here); the gateway of this folder, if one runs, says since when it serves one.
    """
    if not any(row["status"] == "error" for row in rows):
        return {}
    from multiplex.cli.remote._client import client_for

    try:
        client = client_for(state)
        client._timeout = 5.0
        served = client.get("/v1/profiles", limit=1000)
    except Exception:  # no gateway (or none that answers): only the files speak
        return {}
    return {
        str(r["name"]): float(r["serving_last_good_since"])
        for r in served
        if isinstance(r, dict) and r.get("serving_last_good_since")
    }


@profiles_app.command("show", cls=Command)
def show_profile(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Profile name.", autocompletion=complete_profile)],
    as_json: JsonOpt = False,
) -> None:
    """Effective settings of one profile (secrets masked).

    Example: multiplex profiles show research --json
    """
    state = state_of(ctx)
    sup = state.supervisor()
    try:
        data = describe_profile(sup, name)
    except RoutingError as exc:
        bound = state.profile
        if bound is None or Path(bound).name == name:
            raise
        raise RoutingError(
            f"{exc}: -p {bound} limits what is served to that one profile (standalone mode); "
            f"drop -p to show {name!r}"
        ) from None
    finally:
        sup.close()
    if as_json:
        emit_json(data)
        return
    Console(width=200).print(_tree(name, data))
    if data["status"] != "ok":
        raise typer.Exit(1)


def _tree(name: str, data: dict[str, Any]) -> Tree:
    tree = Tree(f"[bold]{name}[/bold]  ({data['status']})")
    for key, value in data.items():
        if key == "name":
            continue
        if key == "last_reload":
            value = local_time(value)
        _branch(tree, key, value)
    return tree


def _branch(tree: Tree, key: str, value: Any) -> None:
    if isinstance(value, dict) and value:
        node = tree.add(f"[bold]{key}[/bold]")
        for k, v in value.items():
            _branch(node, str(k), v)
    elif isinstance(value, list) and value and not all(isinstance(v, str) for v in value):
        node = tree.add(f"[bold]{key}[/bold]")
        for index, item in enumerate(value):
            _branch(node, str(index), item)
    else:
        tree.add(f"[bold]{key}[/bold]: {plain(value)}")


def _check_name(name: str) -> None:
    problem = name_problem(name)
    if problem is not None:
        raise ConfigError(f"{problem} (use --home DIR for a home elsewhere)")


class InitMode(enum.StrEnum):
    MANUAL = "manual"
    STRICT = "strict"


_MODE_WORDS = {
    InitMode.MANUAL: "asks only for what is dangerous; --mode strict asks for everything not allowlisted",
    InitMode.STRICT: "asks for everything not allowlisted; add rules with multiplex allowlist add",
}


def _ask_mode() -> InitMode:
    typer.echo("How should this profile's commands be approved?")
    typer.echo("  manual  ask only for what is dangerous (like Claude Code's default mode)")
    typer.echo("  strict  ask for everything not allowlisted (like Codex's untrusted mode)")
    answer = typer.prompt("mode", default=InitMode.MANUAL.value, type=click.Choice(list(InitMode)))
    return InitMode(answer)


@profiles_app.command("init", cls=Command)
def init_profile(
    ctx: typer.Context,
    name: str,
    home_dir: Annotated[
        Path | None,
        typer.Option(
            "--home", metavar="DIR", help="Create the home here (no multiplex.yaml needed)."
        ),
    ] = None,
    mode: Annotated[
        InitMode | None,
        typer.Option(
            "--mode",
            help="manual: ask only for what is dangerous; strict: ask for everything not allowlisted.",
        ),
    ] = None,
) -> None:
    """Create a new profile home with a commented config.yaml, then say what to do next.

    Without --mode it asks on a terminal (manual elsewhere); docs/approvals.md#modes.

    Example: multiplex profiles init deploy-bot --mode strict
    """
    _check_name(name)
    if mode is None:
        mode = _ask_mode() if sys.stdin.isatty() else InitMode.MANUAL
    state = state_of(ctx)
    if home_dir is not None:
        home = home_dir.expanduser().resolve()
    else:
        if not state.config_path.is_file():
            raise ConfigError(
                "no multiplex.yaml here: run in a project, give --config FILE, "
                "or --home DIR for a home of its own",
                file=state.config_path,
            )
        config = state.config()
        root = (config.base_dir / config.profiles_dir).resolve()
        home = (root / name).resolve()
        if home.parent != root:  # a symlink or odd name must not lead outside profiles_dir
            raise ConfigError(
                f"profile {name!r} would be created outside profiles_dir ({root})",
                file=config.source,
                key="profiles_dir",
            )
    if (home / "config.yaml").exists():
        raise ConfigError("a profile home already exists here", file=home / "config.yaml")
    for sub in ("credentials", "cache", "logs"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(home / "credentials", 0o700)
    (home / "config.yaml").write_text(config_template(mode.value), encoding="utf-8")
    env = home / ".env"
    if not env.exists():
        # docs/security.md#tokens-and-ids: a fresh home gets its own random gateway token.
        env.write_text(
            "# Secrets and variables of this profile (never loaded into os.environ).\n"
            f"{TOKEN_KEY}={secrets.token_urlsafe(32)}\n"
        )
        os.chmod(env, 0o600)
        typer.echo(f"generated its gateway token: {TOKEN_KEY} in {env}")
    typer.echo(f"created profile home {home}")
    typer.echo(f"approvals.mode: {mode.value} ({_MODE_WORDS[mode]})")
    typer.echo("next steps:")
    typer.echo(f"  edit {home / 'config.yaml'} (every key is optional; docs/configuration.md)")
    typer.echo("  multiplex check                       # validate it")
    typer.echo(f"  multiplex profiles show {name}         # its effective settings")
    typer.echo("  a running `multiplex up` serves it at once (its watcher sees the new home)")
