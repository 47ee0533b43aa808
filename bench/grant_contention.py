"""Grant contention: 8 processes x 250 grants to one profile file (docs/allowlist.md).

Each process owns an AllowlistStore on the same config.yaml and grants 250
distinct rules, every grant a locked, fsynced, atomic write-through. The
baseline, measured in the same run, is ONE process granting all 2000 rules
alone. Prints medians over the rounds, grants/s, the ratio to the baseline and
the number of grants lost (must be 0).

    .venv/bin/python bench/grant_contention.py [--rounds 3] [--procs 8] [--grants 250]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path

from multiplex.profiles._loader import read_allowlist
from multiplex.profiles.allowlist._allowlist import AllowlistStore

CONFIG = """\
# research profile: edited by hand, keep these comments
terminal:
  backend: local     # no container
  timeout: 180
command_allowlist:   # grants are appended below
  - git status
approvals:
  mode: manual       # ask for anything not listed
security:
  redact_secrets: true
"""


def _worker(path: str, worker: int, grants: int, start: object, out: object) -> None:
    store = AllowlistStore(Path(path))
    start.wait()  # type: ignore[attr-defined]
    began = time.perf_counter()
    for index in range(grants):
        store.grant(f"tool{worker} run --case {index} *")
    out.put((worker, time.perf_counter() - began, len(store.unsaved)))  # type: ignore[attr-defined]


def _round(procs: int, grants: int) -> tuple[float, int, int]:
    """Wall seconds, lost grants and unsaved grants of one round."""
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(CONFIG)
        start, out = ctx.Event(), ctx.Queue()
        workers = [
            ctx.Process(target=_worker, args=(str(path), w, grants, start, out))
            for w in range(procs)
        ]
        for proc in workers:
            proc.start()
        time.sleep(1.0)  # let every process import and build its store before the gun
        began = time.perf_counter()
        start.set()
        results = []
        while len(results) < len(workers):
            try:
                results.append(out.get(timeout=1.0))
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in workers):
                    raise SystemExit("a worker died; see its traceback above") from None
        wall = time.perf_counter() - began
        for proc in workers:
            proc.join()
        on_disk = set(read_allowlist(path))
        expected = {f"tool{w} run --case {i} *" for w in range(procs) for i in range(grants)}
        assert path.read_text().startswith("# research profile"), "comments lost"
        return wall, len(expected - on_disk), sum(r[2] for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--grants", type=int, default=250)
    args = parser.parse_args()
    total = args.procs * args.grants
    contended, alone, lost, unsaved = [], [], 0, 0
    for _ in range(args.rounds):
        wall, lost_now, unsaved_now = _round(args.procs, args.grants)
        contended.append(wall)
        lost += lost_now
        unsaved += unsaved_now
        wall, lost_now, _ = _round(1, total)
        alone.append(wall)
        lost += lost_now
    c, a = statistics.median(contended), statistics.median(alone)
    print(
        f"{args.procs} processes x {args.grants} grants, one file, {args.rounds} rounds (medians)"
    )
    print(f"  contended: {c:7.3f} s  {total / c:8.1f} grants/s")
    print(f"  baseline : {a:7.3f} s  {total / a:8.1f} grants/s  (1 process x {total} grants)")
    print(f"  ratio contended/baseline wall time: {c / a:.2f}x")
    print(f"  lost: {lost}   unsaved at exit: {unsaved}")
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
