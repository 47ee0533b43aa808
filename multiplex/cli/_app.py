"""The ``multiplex`` command line (SPEC §12). The library never imports this."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from multiplex._errors import MultiplexError
from multiplex.cli._state import CliState

__all__ = ["app", "emit_json", "main", "state_of"]

app = typer.Typer(
    name="multiplex",
    help="Host many AI agent profile homes in one process, isolated per turn.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _global(
    ctx: typer.Context,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="Supervisor config file (default: $MULTIPLEX_CONFIG or ./multiplex.yaml).",
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "-p",
            "--profile",
            help="Standalone mode: serve only this profile, bound for the whole process.",
        ),
    ] = None,
) -> None:
    ctx.obj = CliState(config, profile)


def state_of(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    assert isinstance(obj, CliState)
    return obj


def emit_json(data: Any) -> None:
    """Print JSON on stdout (plain print: rich would wrap long lines)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error and return the Exit to raise."""
    sys.stderr.write(f"multiplex: error: {message}\n")
    return typer.Exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: exit 2 with one line for every user error, never a traceback."""
    from multiplex.cli import _commands  # noqa: F401  (registers the sub-commands)

    try:
        # standalone_mode=False: click hands back typer.Exit codes as the return value.
        code = app(args=argv, standalone_mode=False)
    except MultiplexError as exc:
        sys.stderr.write(f"multiplex: error: {exc}\n")
        sys.exit(2)
    except typer.Abort:
        sys.stderr.write("multiplex: aborted\n")
        sys.exit(130)
    except Exception as exc:
        # Usage errors from typer's (possibly vendored) click: show them, exit 2.
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            sys.exit(code)
        raise
    except KeyboardInterrupt:
        sys.stderr.write("multiplex: interrupted\n")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
