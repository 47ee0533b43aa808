"""The isolation audit (docs/audit.md): multiplexed turns versus standalone processes.

``run_audit(config)`` returns an :class:`AuditReport` (``ok``, ``rows``,
``leaks``, ``as_dict()`` = the ``audit --json`` document);
``render_html(report)`` makes the self-contained HTML report.
"""

from multiplex.audit._audit import run_audit
from multiplex.audit._canaries import Canaries
from multiplex.audit._findings import AuditReport, Leak, SurfaceRow
from multiplex.audit._plugins import PLUGINS_ENV, load_plugins
from multiplex.audit._probe import probe
from multiplex.audit._report_html import render_html

__all__ = [
    "PLUGINS_ENV",
    "AuditReport",
    "Canaries",
    "Leak",
    "SurfaceRow",
    "load_plugins",
    "probe",
    "render_html",
    "run_audit",
]
