"""The CLI's tables: ids never cut short, long text cut unless ``--no-trunc`` (docs/cli.md#tables).

An id (approval, run, kernel, profile, session) is printed whole on one line
however narrow the terminal: the table is then wider than the terminal rather
than an id shortened to ``ap-7d6f…`` that nothing accepts. What a human
decides on (an approval's command, where and why) is wrapped, never cut. Other
long text (a run's commands, its error) is cut with ``…`` at ``TEXT_WIDTH``
columns, or with ``--no-trunc`` (``--wide``) shown whole, wrapped in its column.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Annotated

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["Kind", "NoTruncOpt", "print_table"]

TEXT_WIDTH = 48  # columns a cut text keeps
_MIN_WIDTH = 120  # a narrower (or absent) terminal still gets this much

NoTruncOpt = Annotated[
    bool,
    typer.Option("--no-trunc", "--wide", help="Show long columns whole (ids are never cut)."),
]


class Kind(enum.Enum):
    """How a column behaves when the table is wider than the terminal."""

    ID = "id"  # whole, on one line
    WRAP = "wrap"  # whole, wrapped in its column (what a human decides on: never cut)
    TEXT = "text"  # cut at TEXT_WIDTH (whole and wrapped with --no-trunc)


def print_table(
    columns: Sequence[tuple[str, Kind]], rows: Sequence[Sequence[str]], *, no_trunc: bool
) -> None:
    """Print ``rows`` (plain text cells) under ``columns`` on stdout."""
    table = Table()
    need = 1 + 3 * len(columns)
    for index, (name, kind) in enumerate(columns):
        widest = max([cell_len(name), *(cell_len(row[index]) for row in rows)])
        if kind is Kind.ID:
            table.add_column(name, no_wrap=True, min_width=widest)
            need += widest
        elif no_trunc or kind is Kind.WRAP:
            table.add_column(name, overflow="fold")
            need += min(widest, 12)
        else:
            table.add_column(name, no_wrap=True, overflow="ellipsis", max_width=TEXT_WIDTH)
            need += min(widest, TEXT_WIDTH)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    width = max(_MIN_WIDTH, Console().width, need)
    Console(width=width).print(table)
