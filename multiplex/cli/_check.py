"""``multiplex check [--json]``: validate the config for CI (docs/cli.md#check). Exit 1 on any error."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of
from multiplex.supervision import check_config

__all__ = ["check"]


def check(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Validate multiplex.yaml, every home and every rule (file:line); exit 1 on an error.

    Example: multiplex check --json
    """
    state = state_of(ctx)
    # Each finding is printed once, below: not also as the loaders' log lines.
    logging.disable(logging.WARNING)
    try:
        report = check_config(state.config_path)
    finally:
        logging.disable(logging.NOTSET)
    if as_json:
        emit_json(report.as_dict())
    else:
        for finding in report.errors:
            typer.echo(f"error: {finding}")
        for finding in report.warnings:
            typer.echo(f"warning: {finding}")
        verdict = "ok" if report.ok else f"{len(report.errors)} error(s)"
        typer.echo(
            f"{state.config_path}: {len(report.profiles)} profile(s) checked, {verdict}, "
            f"{len(report.warnings)} warning(s)"
        )
    if not report.ok:
        raise typer.Exit(1)
