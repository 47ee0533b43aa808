"""Global options accepted before or after the subcommand (docs/cli.md#global-options).

``multiplex --config X profiles list`` and ``multiplex profiles list --config X``
mean the same. The global options are declared once, on the root callback;
every command built with :class:`Command` takes a copy of each as its own (so
click parses them like any option, ``--`` included) unless the command already
has an option of that spelling (``allowlist list -p NAME`` keeps its own
``-p``), and merges the values given into the invocation's :class:`CliState`
before it runs. :class:`Group` and :class:`Command` show boolean flags as flags.
"""

from __future__ import annotations

import copy
from typing import Any

from typer import _click as click  # typer ships its own click
from typer.core import TyperCommand, TyperGroup

from multiplex.cli._state import CliState

__all__ = ["GLOBAL_OPTIONS", "Command", "Group"]

# The root callback's parameters that every command takes too (CliState fields).
GLOBAL_OPTIONS = ("config", "profile", "url", "token")
_FIELD = {"config": "config_option"}
_PREFIX = "_global_"


def _flags_as_flags(params: list[Any]) -> list[Any]:
    # typer's rich help prints "<bool>" after every flag; a flag takes no value.
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A command that also takes the global options (where they do not clash with its own)."""

    _globals: list[Any] | None = None

    def get_params(self, ctx: click.Context) -> list[Any]:
        params = super().get_params(ctx)
        if self._globals is None:
            taken = {opt for p in params for opt in getattr(p, "opts", ())}
            root = ctx.find_root().command
            mine: list[Any] = []
            for param in root.get_params(ctx.find_root()) if root is not self else ():
                if param.name not in GLOBAL_OPTIONS or taken & set(param.opts):
                    continue
                clone = copy.copy(param)
                clone.name = _PREFIX + param.name
                mine.append(clone)
            self._globals = mine
        # --help stays last in the listing.
        return _flags_as_flags([*params[:-1], *self._globals, *params[-1:]])

    def invoke(self, ctx: click.Context) -> Any:
        root = ctx.find_root()
        if not isinstance(root.obj, CliState):
            root.obj = CliState()
        for key in [k for k in ctx.params if k.startswith(_PREFIX)]:
            value = ctx.params.pop(key)
            if value is not None:
                name = key.removeprefix(_PREFIX)
                setattr(root.obj, _FIELD.get(name, name), value)
        return super().invoke(ctx)


class Group(TyperGroup):
    """A command group whose help shows flags without a value type."""

    def get_params(self, ctx: click.Context) -> list[Any]:
        return _flags_as_flags(super().get_params(ctx))
