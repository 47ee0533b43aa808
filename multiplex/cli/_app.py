"""The ``multiplex`` command line (docs/cli.md). The library never imports this."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from multiplex import __version__
from multiplex._errors import MultiplexError
from multiplex.cli._audit import audit
from multiplex.cli._check import check
from multiplex.cli._options import Command, Group
from multiplex.cli._profiles import profiles_app
from multiplex.cli._state import CliState
from multiplex.cli.policy._allowlist import allowlist_app
from multiplex.cli.policy._approvals import approvals_app, exec_command
from multiplex.cli.policy._decisions import decisions
from multiplex.cli.policy._policy import policy_app
from multiplex.cli.policy._suggest import suggest_rules
from multiplex.cli.remote._kernel import kernel_app
from multiplex.cli.remote._remote import answer_approval, list_approvals, runs_app
from multiplex.cli.remote._run import run_command
from multiplex.cli.remote._sessions import list_sessions, revoke_grant
from multiplex.cli.serving._hook import hook_app
from multiplex.cli.serving._mcp import mcp
from multiplex.cli.serving._up import up

__all__ = ["app", "main"]

app = typer.Typer(
    cls=Group,
    name="multiplex",
    help="Host many AI agent profile homes in one process, isolated per turn.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"multiplex {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global(
    ctx: typer.Context,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Supervisor config file (default: $MULTIPLEX_CONFIG or ./multiplex.yaml).",
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "-p",
            "--profile",
            metavar="NAME",
            help="Standalone mode: serve only this profile, bound for the whole process.",
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            metavar="URL",
            help="Running gateway (default: $MULTIPLEX_URL, else gateway of multiplex.yaml).",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            metavar="TOKEN",
            help="Bearer token (default: $MULTIPLEX_TOKEN, else the admin token file of `up`).",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    ctx.obj = CliState(config, profile, url, token)


# Every command, in one explicit list: the modules above define them, this one
# places them on the root app (no module registers itself by being imported).
app.command("up", cls=Command)(up)
app.command("exec", cls=Command)(exec_command)
app.command("run", cls=Command)(run_command)
app.command("audit", cls=Command)(audit)
app.command("check", cls=Command)(check)
app.command("decisions", cls=Command)(decisions)
app.command("mcp", cls=Command)(mcp)
app.add_typer(profiles_app, name="profiles")
app.add_typer(allowlist_app, name="allowlist")
approvals_app.command("list", cls=Command)(list_approvals)
approvals_app.command("answer", cls=Command)(answer_approval)
approvals_app.command("sessions", cls=Command)(list_sessions)
approvals_app.command("revoke", cls=Command)(revoke_grant)
approvals_app.command("suggest", cls=Command)(suggest_rules)
app.add_typer(approvals_app, name="approvals")
app.add_typer(kernel_app, name="kernel")
app.add_typer(runs_app, name="runs")
app.add_typer(policy_app, name="policy")
app.add_typer(hook_app, name="hook")


def main(argv: list[str] | None = None) -> None:
    """Entry point: exit 2 with one line for every user error, never a traceback."""
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
