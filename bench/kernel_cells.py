"""Session kernel cells: cold start and warm round trip, against a fresh Python per call (issue: kernels).

Prints, for one profile's session kernel driven through ``Supervisor.execute_code``:
the cold start (first cell of a fresh kernel, ``reset=True``) and the warm round
trip of ``1+1`` (median and p99), then the same ``1+1`` as a fresh
``python -c`` process per call, measured in the same run, and the ratio.
Targets: warm median <= 5 ms and >= 20x faster than a fresh process per call.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home

from multiplex import Supervisor

COLD = 5
WARM = 400
FRESH = 40


def _ms(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples) * 1000, percentile(samples, 99) * 1000


def main() -> None:
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_home(root / "profiles", "bench", "terminal:\n  cwd: /tmp\n")
        (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
        with Supervisor.from_config(root / "multiplex.yaml") as sup:
            cold: list[float] = []
            for _ in range(COLD):
                start = time.perf_counter()
                r = sup.execute_code("1+1", profile="bench", session="s", reset=True)
                cold.append(time.perf_counter() - start)
                assert r.result == "2" and r.fresh_kernel, r
            for _ in range(20):  # settle
                sup.execute_code("1+1", profile="bench", session="s")
            warm: list[float] = []
            for _ in range(WARM):
                start = time.perf_counter()
                r = sup.execute_code("1+1", profile="bench", session="s")
                warm.append(time.perf_counter() - start)
                assert r.result == "2" and not r.fresh_kernel, r
        fresh: list[float] = []
        for _ in range(FRESH):
            start = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", "print(1+1)"], capture_output=True, text=True, check=True
            )
            fresh.append(time.perf_counter() - start)
            assert out.stdout == "2\n"
    print(f"load average (1 min) before / after: {before:.2f} / {os.getloadavg()[0]:.2f}")
    cold_med, cold_p99 = _ms(cold)
    warm_med, warm_p99 = _ms(warm)
    fresh_med, fresh_p99 = _ms(fresh)
    print(
        f"cold start (first cell, fresh kernel), n={COLD}: median {cold_med:.0f} ms, p99 {cold_p99:.0f} ms"
    )
    print(
        f"warm cell 1+1, n={WARM}:                     median {warm_med:.2f} ms, p99 {warm_p99:.2f} ms"
    )
    print(
        f"fresh `python -c` per call, n={FRESH}:          median {fresh_med:.2f} ms, p99 {fresh_p99:.2f} ms"
    )
    print(
        f"warm vs fresh process: {fresh_med / warm_med:.1f}x faster at the median (target >= 20x)"
    )
    print(f"target warm median <= 5 ms: {'met' if warm_med <= 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
