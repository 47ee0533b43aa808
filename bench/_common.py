"""Helpers shared by the benchmarks: timing, percentiles, temporary homes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path


def median_us(fn: Callable[[], object], *, loops: int, repeats: int = 7) -> float:
    """Median over ``repeats`` batches of the per-call time of ``fn`` in microseconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - start) / loops * 1e6)
    return statistics.median(samples)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def write_home(root: Path, name: str, config: str, env: str = "") -> Path:
    home = root / name
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(config)
    if env:
        (home / ".env").write_text(env)
    return home
