"""``multiplex audit [--json] [--html FILE]`` and the probe it launches (docs/audit.md, docs/cli.md).

``multiplex -p NAME audit --probe --json`` (hidden) is one standalone probe:
it prints that profile's surfaces (masked, with digests of the raw values).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from multiplex._errors import RoutingError
from multiplex.audit import AuditReport, probe, render_html, run_audit
from multiplex.cli._output import emit_json
from multiplex.cli._state import state_of

__all__ = ["audit"]

_MATRIX_MAX_PROFILES = 6


def audit(
    ctx: typer.Context,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (docs/cli.md).")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Also write a self-contained HTML report."),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", min=1, help="Standalone probes running at once (default: CPU count)."
        ),
    ] = None,
    probe_mode: Annotated[bool, typer.Option("--probe", hidden=True)] = False,
) -> None:
    """Prove every profile's turns see what a standalone process for it sees; exit 1 on a divergence or leak.

    Example: multiplex audit --html audit.html
    """
    state = state_of(ctx)
    if probe_mode:
        _probe(ctx)
        return
    only = [state.profile] if state.profile else None
    if as_json:
        report = run_audit(state.config_option, only=only, jobs=jobs)
    else:
        report = _with_progress(state.config_option, only, jobs)
    if html is not None:
        html.write_text(render_html(report), encoding="utf-8")
    if as_json:
        emit_json(report.as_dict())
    else:
        _print(report, html)
    raise typer.Exit(report.exit_code)


def _probe(ctx: typer.Context) -> None:
    state = state_of(ctx)
    if state.profile is None:
        raise typer.BadParameter("--probe needs -p NAME (standalone mode)")
    name = Path(state.profile).name
    sup = state.supervisor(context="cron")
    try:
        profile = sup.profiles[name]
        if not profile.loaded:
            raise RoutingError(f"profile {name!r} is not loaded: {profile.error}")
        emit_json(probe(sup, name))
    finally:
        sup.close()


def _with_progress(config: str | None, only: list[str] | None, jobs: int | None) -> AuditReport:
    console = Console(stderr=True)
    columns = (
        TextColumn("standalone probes"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("", total=None)

        def advance(done: int, total: int, name: str) -> None:
            bar.update(task, completed=done, total=total, description=name)

        return run_audit(config, only=only, jobs=jobs, progress=advance)


def _short(value: Any, limit: int = 48) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print(report: AuditReport, html: Path | None) -> None:
    console = Console(width=max(120, Console().width))
    if len(report.profiles) <= _MATRIX_MAX_PROFILES:
        table = Table(
            "surface", *report.profiles, title="surfaces × profiles (multiplexed vs standalone)"
        )
        cells = {(r.surface, r.profile): r for r in report.rows}
        for surface in report.surfaces:
            row = [surface]
            for p in report.profiles:
                cell = cells.get((surface, p))
                if cell is None:
                    row.append("")
                elif cell.match:
                    row.append(f"[green]✓[/green] {_escape(_short(cell.multiplexed))}")
                else:
                    row.append("[bold red]✗ DIVERGES[/bold red]")
            table.add_row(*row)
    else:
        table = Table(
            "surface", "match", "divergent profiles", title="surfaces (multiplexed vs standalone)"
        )
        for surface in report.surfaces:
            rows = [r for r in report.rows if r.surface == surface]
            bad = [r.profile for r in rows if not r.match]
            style = "red" if bad else "green"
            table.add_row(
                surface,
                f"[{style}]{len(rows) - len(bad)}/{len(rows)}[/{style}]",
                _escape(", ".join(bad)),
            )
    console.print(table)
    if report.divergences:
        div = Table(
            "surface",
            "profile",
            "multiplexed",
            "standalone",
            title="[bold red]divergences[/bold red]",
        )
        for r in report.divergences:
            div.add_row(
                r.surface,
                r.profile,
                _escape(_short(r.multiplexed, 200)),
                _escape(_short(r.standalone, 200)),
            )
        console.print(div)
    if report.leaks:
        leaks = Table(
            "kind",
            "profile",
            "where",
            "canary of",
            "side",
            "location",
            "detail",
            title="[bold red]leaks[/bold red]",
        )
        for x in report.leaks:
            leaks.add_row(
                x.kind,
                x.profile,
                x.surface,
                x.source or "",
                x.side,
                x.location or "",
                _escape(x.detail),
            )
        console.print(leaks)
    else:
        console.print("leaks: none")
    for note in report.notes:
        console.print(f"[yellow]note:[/yellow] {_escape(note)}")
    if html is not None:
        console.print(f"HTML report: {html}")
    style = "bold green" if report.ok else "bold red"
    console.print(f"[{style}]{_escape(report.verdict)}[/{style}]")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
