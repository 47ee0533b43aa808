"""Run the isolation audit end to end (docs/audit.md).

1. Copy the served homes into a private sandbox and give each copy canaries.
2. Start one standalone probe process per profile, in parallel (background).
3. Meanwhile, in this process: one strict multiplex ``Supervisor`` over the
   copies resolves every surface of every profile from concurrent turns, then
   runs the canary leak checks for every profile.
4. Compare per surface x profile; collect leaks from both sides.
The sandbox is removed afterwards; the operator's files are only read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from multiplex.audit._compare import compare, masker
from multiplex.audit._findings import AuditReport, Leak, SurfaceRow
from multiplex.audit._kernel_leaks import check_kernels
from multiplex.audit._leaks import LeakCheck, check_profile
from multiplex.audit._oscheck import check_os
from multiplex.audit._plugins import load_plugins
from multiplex.audit._runner import MultiplexedRenders, resolve_concurrently
from multiplex.audit._sandbox import Sandbox, build_sandbox
from multiplex.audit._standalone import ProbeResult, Progress, run_probes
from multiplex.audit._walls import check_walls
from multiplex.scopes import SURFACES
from multiplex.supervision import Supervisor, config_path_from

__all__ = ["run_audit"]


def run_audit(
    config: str | Path | None = None,
    *,
    only: Sequence[str] | None = None,
    rounds: int = 3,
    jobs: int | None = None,
    probe_timeout: float = 120.0,
    progress: Progress | None = None,
) -> AuditReport:
    """Audit every profile served by ``config`` (default: ``MULTIPLEX_CONFIG`` / ./multiplex.yaml).

    ``only`` restricts the audit to some profiles; ``jobs`` bounds the probes
    running at once (default: CPU count); ``progress(done, total, profile)`` is
    called as probes finish. Raises ``ConfigError`` when the config is unusable.
    """
    started = time.monotonic()
    load_plugins()
    quiet = _QuietCopies()
    logging.getLogger("multiplex.profiles").addFilter(quiet)
    try:
        sandbox = build_sandbox(config_path_from(config), only)
        try:
            return _audit(sandbox, started, rounds, jobs, probe_timeout, progress)
        finally:
            sandbox.remove()
    finally:
        logging.getLogger("multiplex.profiles").removeFilter(quiet)


class _QuietCopies(logging.Filter):
    # Loading the sandbox copies repeats every config warning with a temporary
    # path; the operator sees those warnings when the real homes load.
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.WARNING


def _audit(
    sandbox: Sandbox,
    started: float,
    rounds: int,
    jobs: int | None,
    probe_timeout: float,
    progress: Progress | None,
) -> AuditReport:
    timings = {"sandbox": time.monotonic() - started}
    sup = Supervisor.from_config(sandbox.config, strict=True)
    try:
        names = [n for n, p in sup.profiles.items() if n not in sandbox.skipped and p.loaded]
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-probes") as background:
            t0 = time.monotonic()
            probes_future = background.submit(
                run_probes,
                sandbox.config,
                sandbox.homes,
                names,
                sandbox.manifest,
                jobs=jobs,
                timeout=probe_timeout,
                progress=progress,
            )
            mux = resolve_concurrently(sup, names, rounds=rounds)
            timings["multiplexed"] = time.monotonic() - t0
            probes = probes_future.result()
            timings["standalone"] = max((p.seconds for p in probes.values()), default=0.0)
            timings["probes_wall"] = time.monotonic() - t0
        # The leak checks run real commands and kernels: after the probes, so that
        # they take no CPU from them (docs/audit.md#performance).
        t1 = time.monotonic()
        checks = _leak_checks(sup, sandbox, names, mux)
        for name, found in check_kernels(sup, names, sandbox.canaries).items():
            checks.setdefault(name, LeakCheck()).leaks.extend(found.leaks)
            checks[name].notes.extend(found.notes)
        timings["leaks"] = time.monotonic() - t1
        surfaces = _surface_names(mux, probes)
        rows = compare(
            surfaces,
            names,
            mux.values,
            {n: p.surfaces if p.error is None else _failed(surfaces, p) for n, p in probes.items()},
            {n: p.digests for n, p in probes.items()},
            masker(
                sup.known_secrets(),
                {str(sandbox.root.resolve()): "<sandbox>", str(sandbox.root): "<sandbox>"},
            ),
        )
        rows = [_unstable(r, mux) for r in rows]
        leaks = _leaks(mux, checks, probes)
        notes = [f"{n}: not audited, its config is broken: {e}" for n, e in sandbox.skipped.items()]
        for check in checks.values():
            notes.extend(check.notes)
        for p in probes.values():
            # The same note from both sides is said once.
            notes.extend(
                f"standalone {note}"
                for note in p.notes
                if note not in checks.get(p.profile, LeakCheck()).notes
            )
    finally:
        sup.close()
    timings["total"] = time.monotonic() - started
    return AuditReport(
        rows=tuple(rows),
        leaks=tuple(leaks),
        profiles=tuple(names),
        surfaces=tuple(surfaces),
        skipped=dict(sandbox.skipped),
        notes=tuple(notes),
        timings=timings,
        turns=mux.turns,
    )


def _leak_checks(
    sup: Supervisor, sandbox: Sandbox, names: Sequence[str], mux: MultiplexedRenders
) -> dict[str, LeakCheck]:
    # Each check runs one real command; they are independent, so run a few at once.
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="audit-leaks") as pool:
        futures = {
            n: pool.submit(check_profile, sup, n, mux.values.get(n, {}), sandbox.canaries)
            for n in names
        }
        os_futures = {n: pool.submit(check_os, sup, n, sandbox.canaries) for n in names}
        wall_futures = {n: pool.submit(check_walls, sup, n) for n in names}
        checks = {n: f.result() for n, f in futures.items()}
    for n, f in [*os_futures.items(), *wall_futures.items()]:
        extra = f.result()
        checks[n].leaks.extend(extra.leaks)
        checks[n].notes.extend(extra.notes)
    return checks


def _surface_names(mux: MultiplexedRenders, probes: dict[str, ProbeResult]) -> list[str]:
    # The registry first, in its order; then anything only a probe resolved.
    names = list(SURFACES.names())
    for p in probes.values():
        names.extend(s for s in p.digests if s not in names)
    return names


def _failed(surfaces: Sequence[str], probe: ProbeResult) -> dict[str, object]:
    return {s: {"error": f"standalone probe failed: {probe.error}"} for s in surfaces}


def _unstable(row: SurfaceRow, mux: MultiplexedRenders) -> SurfaceRow:
    if (row.profile, row.surface) in mux.unstable and row.match:
        return SurfaceRow(row.surface, row.profile, row.multiplexed, row.standalone, False)
    return row


def _leaks(
    mux: MultiplexedRenders, checks: dict[str, LeakCheck], probes: dict[str, ProbeResult]
) -> list[Leak]:
    leaks = [
        Leak(
            "isolation",
            v.profile,
            v.target,
            f"surface {v.surface!r}: {v.message}",
            location=v.location,
        )
        for v in mux.violations
    ]
    leaks.extend(
        Leak(
            "unstable",
            profile,
            surface,
            f"{len(values)} different values across concurrent turns of this profile",
        )
        for (profile, surface), values in mux.unstable.items()
    )
    for check in checks.values():
        leaks.extend(check.leaks)
    for name, probe in probes.items():
        if probe.error is not None:
            leaks.append(Leak("error", name, "standalone probe", probe.error, side="standalone"))
        for data in probe.leaks:
            leaks.append(
                Leak(
                    data.get("kind", "error"),
                    name,
                    str(data.get("surface", "")),
                    str(data.get("detail", "")),
                    data.get("source"),
                    "standalone",
                    data.get("location"),
                )
            )
    return leaks
