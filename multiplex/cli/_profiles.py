"""``multiplex profiles list|show|init`` (docs/cli.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from multiplex._errors import ConfigError
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.cli._templates import CONFIG_TEMPLATE
from multiplex.supervision import describe_profile, profile_row

profiles_app = typer.Typer(help="Profile homes: list, show, init.", no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@profiles_app.command("list")
def list_profiles(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """One row per profile: name, home, backend, cwd, redaction, allowlist size, status, error."""
    sup = state_of(ctx).supervisor()
    rows = [profile_row(sup, p) for p in sup.profiles.values()]
    if as_json:
        emit_json(rows)
        return
    table = Table(
        "name", "status", "backend", "sandbox", "cwd", "redact", "allowlist", "home", "error"
    )
    for row in rows:
        table.add_row(
            row["name"],
            row["status"],
            str(row["backend"] or "-"),
            str(row["sandbox"] or "-"),
            str(row["cwd"] or "-"),
            "-" if row["redact_secrets"] is None else ("on" if row["redact_secrets"] else "off"),
            "-" if row["allowlist_size"] is None else str(row["allowlist_size"]),
            row["home"],
            row["error"] or "",
        )
    console = Console(width=200)
    console.print(table)
    for row in rows:
        if row["sandbox_warning"]:  # docs/execution.md#the-sandbox
            console.print(f"warning: {row['name']}: {row['sandbox_warning']}")


@profiles_app.command("show")
def show_profile(ctx: typer.Context, name: str, as_json: JsonOpt = False) -> None:
    """Effective settings of one profile (secrets masked)."""
    sup = state_of(ctx).supervisor()
    data = describe_profile(sup, name)
    if as_json:
        emit_json(data)
        return
    console = Console(width=200)
    for key, value in data.items():
        console.print(f"[bold]{key}[/bold]: {value}")


@profiles_app.command("init")
def init_profile(ctx: typer.Context, name: str) -> None:
    """Create a new profile home with a commented config.yaml."""
    state = state_of(ctx)
    config = state.config()
    home = Path(name) if "/" in name else config.base_dir / config.profiles_dir / name
    if (home / "config.yaml").exists():
        raise ConfigError("a profile home already exists here", file=home / "config.yaml")
    for sub in ("credentials", "cache", "logs"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(home / "credentials", 0o700)
    (home / "config.yaml").write_text(CONFIG_TEMPLATE, encoding="utf-8")
    env = home / ".env"
    if not env.exists():
        env.write_text("# Secrets and variables of this profile (never loaded into os.environ).\n")
        os.chmod(env, 0o600)
    typer.echo(f"created profile home {home}")
