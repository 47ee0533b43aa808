"""Benchmark: the isolation audit over 100 generated profiles (docs/audit.md).

Generates 100 varied homes (tests/audit's generator), runs the whole audit
(sandbox, concurrent multiplexed turns, leak checks, one standalone probe
process per profile in parallel) and prints the median wall time over the
runs and the share of it spent waiting for the standalone probes.

Baseline, measured in the same run: the median wall time of ONE probe
process; ``ideal = profiles x one_probe / cpus`` is what perfectly parallel
probes would cost. The ratio ``probes_wall / ideal`` says how close the
audit gets to it. Targets on a 2-core machine: <= 60 s total, ratio <= 1.2.

    .venv/bin/python bench/audit_scale.py [--profiles 100] [--runs 1]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from multiplex.audit import run_audit  # noqa: E402
from multiplex.audit._sandbox import build_sandbox  # noqa: E402
from multiplex.audit._standalone import probe_argv  # noqa: E402
from tests.audit import generate_homes  # noqa: E402

TARGET_SECONDS = 60.0
TARGET_RATIO = 1.2  # probes_wall / ideal parallel probes


def one_probe_seconds(config: Path, repeats: int = 5) -> float:
    """Median wall time of a single standalone probe process (the baseline)."""
    sandbox = build_sandbox(config, only=["p000"])
    try:
        env = dict(os.environ, MULTIPLEX_AUDIT_CANARIES=str(sandbox.manifest))
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run(
                probe_argv(sandbox.config, "p000"),
                cwd=sandbox.homes["p000"],
                env=env,
                capture_output=True,
                check=True,
            )
            times.append(time.perf_counter() - started)
        return statistics.median(times)
    finally:
        sandbox.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    cpus = os.cpu_count() or 1
    logging.getLogger("multiplex.profiles").setLevel(
        logging.ERROR
    )  # generated homes warn by design
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
        config = generate_homes(Path(tmp), args.profiles)
        # The machine is shared: the floor is measured before and after the
        # audit and their mean is the baseline (load drifts during a run).
        before = one_probe_seconds(config)
        totals, probes, ok = [], [], True
        for _ in range(args.runs):
            report = run_audit(config)
            ok = ok and report.ok
            totals.append(report.timings["total"])
            probes.append(report.timings["probes_wall"])
            phases = ", ".join(f"{k} {v:.2f}s" for k, v in report.timings.items())
        after = one_probe_seconds(config)
        baseline = (before + after) / 2
    total, probe_wall = statistics.median(totals), statistics.median(probes)
    ideal = args.profiles * baseline / cpus
    print(f"profiles: {args.profiles}, cpus: {cpus}, runs: {args.runs}, audit ok: {ok}")
    print(f"last run phases: {phases}")
    print(
        f"median audit wall time: {total:.2f} s (target <= {TARGET_SECONDS:.0f} s: {'met' if total <= TARGET_SECONDS else 'MISSED'})"
    )
    print(
        f"median time waiting for standalone probes: {probe_wall:.2f} s = {probe_wall / total:.0%} of the total"
    )
    print(
        f"probe floor: one probe process {baseline:.3f} s (median of 5, before {before:.3f} s, "
        f"after {after:.3f} s); ideal parallel probes {ideal:.2f} s"
    )
    ratio = probe_wall / ideal
    print(
        f"ratio probes_wall / ideal: {ratio:.2f} "
        f"(target <= {TARGET_RATIO:.2f}: {'met' if ratio <= TARGET_RATIO else 'MISSED'})"
    )
    load = os.getloadavg()
    print(f"machine load average (1, 5, 15 min): {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
