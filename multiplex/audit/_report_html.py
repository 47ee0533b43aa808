"""The audit as one self-contained HTML page (``multiplex audit --html FILE``).

Inline CSS, no script, no external asset; every value is HTML-escaped (values
are already masked: no secret reaches the page).
"""

from __future__ import annotations

import html
import json
from typing import Any

from multiplex.audit._findings import AuditReport, SurfaceRow

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1b1f24;background:#fafbfc}
h1{font-size:1.5rem;margin:0 0 1rem}h2{font-size:1.15rem;margin:2rem 0 .6rem}
.verdict{padding:1rem 1.2rem;border-radius:8px;font-size:1.15rem;font-weight:600}
.pass{background:#e6f4ea;border:1px solid #34a853;color:#0d652d}
.fail{background:#fce8e6;border:1px solid #d93025;color:#a50e0e}
table{border-collapse:collapse;background:#fff;margin:.4rem 0;max-width:100%}
th,td{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f0f3f6;position:sticky;top:0}
td.ok{background:#f3fbf5}td.bad{background:#fde2e1;font-weight:600}
td.cell{max-width:22rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-family:ui-monospace,monospace;font-size:12px}
pre{margin:0;white-space:pre-wrap;word-break:break-all;font-size:12px}
.muted{color:#57606a}.scroll{overflow-x:auto}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dt{font-weight:600}
"""


def _e(value: Any) -> str:
    return html.escape(
        value if isinstance(value, str) else json.dumps(value, sort_keys=True), quote=True
    )


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _matrix(report: AuditReport) -> str:
    cells: dict[tuple[str, str], SurfaceRow] = {(r.surface, r.profile): r for r in report.rows}
    head = "".join(f"<th>{_e(p)}</th>" for p in report.profiles)
    body = []
    for surface in report.surfaces:
        tds = []
        for profile in report.profiles:
            row = cells.get((surface, profile))
            if row is None:
                tds.append("<td class='cell'></td>")
                continue
            mark = "✓" if row.match else "✗ DIVERGES"
            css = "ok" if row.match else "bad"
            title = (
                _e(row.multiplexed)
                if row.match
                else _e(
                    f"multiplexed: {_short(row.multiplexed, 400)} | standalone: {_short(row.standalone, 400)}"
                )
            )
            tds.append(
                f"<td class='cell {css}' title='{title}'>{mark} {_e(_short(row.multiplexed))}</td>"
            )
        body.append(f"<tr><th>{_e(surface)}</th>{''.join(tds)}</tr>")
    return f"<div class='scroll'><table><tr><th>surface \\ profile</th>{head}</tr>{''.join(body)}</table></div>"


def _divergences(report: AuditReport) -> str:
    rows = report.divergences
    if not rows:
        return "<p class='muted'>None: every surface of every profile matches its standalone process.</p>"
    body = "".join(
        f"<tr><td>{_e(r.surface)}</td><td>{_e(r.profile)}</td>"
        f"<td class='bad'><pre>{_e(r.multiplexed)}</pre></td><td><pre>{_e(r.standalone)}</pre></td></tr>"
        for r in rows
    )
    return f"<table><tr><th>surface</th><th>profile</th><th>multiplexed</th><th>standalone</th></tr>{body}</table>"


def _leaks(report: AuditReport) -> str:
    if not report.leaks:
        return "<p class='muted'>None: no canary of one profile was seen by another; no turn changed process state.</p>"
    body = "".join(
        f"<tr><td class='bad'>{_e(x.kind)}</td><td>{_e(x.profile)}</td><td>{_e(x.surface)}</td>"
        f"<td>{_e(x.source or '')}</td><td>{_e(x.side)}</td><td>{_e(x.location or '')}</td><td>{_e(x.detail)}</td></tr>"
        for x in report.leaks
    )
    return (
        "<table><tr><th>kind</th><th>seen in profile</th><th>where</th><th>canary of</th>"
        f"<th>side</th><th>location</th><th>detail</th></tr>{body}</table>"
    )


def render_html(report: AuditReport) -> str:
    """The whole report as one HTML document."""
    css = "pass" if report.ok else "fail"
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in report.timings.items())
    notes = "".join(f"<li>{_e(n)}</li>" for n in report.notes)
    summary = (
        f"<dl><dt>profiles</dt><dd>{len(report.profiles)}</dd>"
        f"<dt>surfaces</dt><dd>{len(report.surfaces)}</dd>"
        f"<dt>concurrent turns</dt><dd>{report.turns}</dd>"
        f"<dt>divergences</dt><dd>{len(report.divergences)}</dd>"
        f"<dt>leaks</dt><dd>{len(report.leaks)}</dd>"
        f"<dt>timings</dt><dd>{_e(timings)}</dd>"
        f"<dt>exit code</dt><dd>{report.exit_code}</dd></dl>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>multiplex isolation audit: {'passed' if report.ok else 'FAILED'}</title>"
        f"<style>{_CSS}</style></head><body>"
        "<h1>multiplex isolation audit</h1>"
        f"<div id='verdict' class='verdict {css}'>{_e(report.verdict)}</div>"
        f"<h2>Summary</h2>{summary}"
        "<h2>Surfaces × profiles</h2><p class='muted'>Each cell compares a multiplexed turn "
        "(concurrent threads and asyncio tasks) with a standalone process for that profile; "
        "values are masked.</p>"
        f"{_matrix(report)}"
        f"<h2 id='divergences'>Divergences ({len(report.divergences)})</h2>{_divergences(report)}"
        f"<h2 id='leaks'>Leaks ({len(report.leaks)})</h2>{_leaks(report)}"
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + "</body></html>\n"
    )
