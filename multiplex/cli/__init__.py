"""The command line: ``multiplex ...`` (typer + rich sit here, never in the library)."""

from multiplex.cli._app import app, main

__all__ = ["app", "main"]
