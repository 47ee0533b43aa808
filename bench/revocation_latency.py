"""Revocation latency: a hand edit (atomic rename) until allows() flips.

200 edits each remove a rule from config.yaml by write-temp-then-rename (what
editors and `sed -i` do); the time until the running supervisor's store stops
allowing it is measured. Prints p50/p99 and the ratio to the configured
debounce (the floor). Target: p99 <= 200 ms with a 50 ms debounce.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home

from multiplex import Supervisor

EDITS = 200
DEBOUNCE_MS = 50
BASE = "# operator's file\napprovals:\n  mode: manual\ncommand_allowlist:\n  - git status\n"


def atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(".config.yaml.edit")
    tmp.write_text(text)
    os.replace(tmp, path)


def wait(predicate, limit: float = 5.0) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > limit:
            raise TimeoutError("the edit was not seen")
        time.sleep(0.0005)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("p", "other"):
            write_home(root / "profiles", name, BASE)
        (root / "multiplex.yaml").write_text(
            f"profiles_dir: profiles\ndefault_profile: null\nwatch: {{mode: auto, debounce_ms: {DEBOUNCE_MS}}}\n"
        )
        with Supervisor.from_config(root / "multiplex.yaml") as sup:
            store = sup.profiles["p"].allowlist
            config = sup.profiles["p"].config_path
            latencies: list[float] = []
            for i in range(EDITS):
                rule = f"deploy-{i} *"
                atomic_write(config, BASE + f"  - '{rule}'\n")
                wait(lambda r=rule: store.allows([*r.split()[:1], "x"]))
                started = time.perf_counter()
                atomic_write(config, BASE)  # the revocation
                wait(lambda r=rule: not store.allows([*r.split()[:1], "x"]))
                latencies.append((time.perf_counter() - started) * 1000)
            hist = sup.metrics.registry.get_sample_value(
                "multiplex_revocation_latency_seconds_count", {}
            )
    p50, p99 = statistics.median(latencies), percentile(latencies, 99)
    print(
        f"revocation latency over {EDITS} atomic-rename edits (watch mode {sup.config.watch.mode}):"
    )
    print(
        f"  p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies):.1f} ms   (target: p99 <= 200 ms)"
    )
    print(
        f"  ratio to the {DEBOUNCE_MS} ms debounce (the floor): p50 {p50 / DEBOUNCE_MS:.2f}x, p99 {p99 / DEBOUNCE_MS:.2f}x"
    )
    print(f"  multiplex_revocation_latency_seconds observations: {hist:.0f}")


if __name__ == "__main__":
    main()
