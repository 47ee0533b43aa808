"""Per-command cost of the bubblewrap sandbox (issue: isolation the OS enforces).

Runs ``true`` through ``multiplex.execution.execute`` for one profile with
``terminal.sandbox: bwrap`` and one with ``sandbox: none`` (the sub-reaper),
interleaved in a new order each round so all see the same machine load,
beside the two floors measured in the same rounds: a bare ``bash -c true`` subprocess (the floor of ``none``)
and the same command in a minimal fresh bubblewrap sandbox (the floor of
``bwrap``). Prints the medians, the ratios against each floor (targets:
0.8x for both) and the sandbox's overhead at the median against the same
command unsandboxed (a figure; the earlier target of at most 15 ms gave way to
the minimal-bwrap floor). Then each of ``none`` and ``bwrap`` beside its floor
alone, back to back (warm caches: the better case for the Python paths). A
missed target is printed, not an exit status.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home

from multiplex import Supervisor
from multiplex.execution import bwrap_status, execute

RUNS = 60
PAIRED = 200  # rounds of one run and its floor alone
# The floor of docs/operations.md#capacity: the same command in a minimal fresh sandbox.
FLOOR = [
    "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-all", "--die-with-parent", "bash", "-c", "true",
]  # fmt: skip


def _timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def _alone(
    ours: Callable[[], object], floor: Callable[[], object], shuffle: Callable[[list[int]], None]
) -> tuple[float, float, float]:
    """The median per-round ratio floor/ours of ``PAIRED`` rounds of the two alone, and
    their medians (ms); which of the two goes first is drawn each round."""
    mine: list[float] = []
    theirs: list[float] = []
    order = [0, 1]
    for _ in range(PAIRED):
        shuffle(order)
        for side in order:
            (mine if side == 0 else theirs).append(_timed(ours if side == 0 else floor))
    ratio = statistics.median(t / m for m, t in zip(mine, theirs, strict=True))
    return ratio, statistics.median(mine), statistics.median(theirs)


def main() -> None:
    works, detail = bwrap_status()
    if not works:
        print(f"bwrap unavailable: {detail}")
        sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, sandbox, network in (
            ("boxed", "bwrap", "off"),
            ("plain", "none", "off"),
            ("egress", "bwrap", "on"),
        ):
            write_home(
                root / "profiles",
                name,
                f"terminal:\n  sandbox: {sandbox}\n  cwd: work\n  network: '{network}'\n"
                "  credential_files: [credentials/t.txt]\napprovals:\n  mode: off\n",
            )
            (root / "profiles" / name / "work").mkdir()
            (root / "profiles" / name / "credentials").mkdir()
            (root / "profiles" / name / "credentials/t.txt").write_text("token\n")
        (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
        sup = Supervisor.from_config(root / "multiplex.yaml")
        hidden = sup.hidden_paths
        samples: dict[str, list[float]] = {k: [] for k in ("bwrap", "on", "none", "bare", "floor")}
        with sup.turn("boxed", "s", "api") as boxed_scope:
            pass
        with sup.turn("plain", "s", "api") as plain_scope:
            pass
        with sup.turn("egress", "s", "api") as egress_scope:
            pass
        for _ in range(5):  # warm every path (the egress namespace starts once per profile)
            for scope in (boxed_scope, plain_scope, egress_scope):
                execute(scope, "true", hidden=hidden)
        runs = {
            "bwrap": lambda: execute(boxed_scope, "true", hidden=hidden),
            "on": lambda: execute(egress_scope, "true", hidden=hidden),
            "none": lambda: execute(plain_scope, "true", hidden=hidden),
            "bare": lambda: subprocess.run(["bash", "-c", "true"], check=True),
            "floor": lambda: subprocess.run(FLOOR, check=True),
        }
        order = list(runs)
        shuffle = random.Random(32).shuffle
        for _ in range(RUNS):
            # A new order each round: what one run leaves behind (the egress
            # proxy's connection ending, a sandbox's teardown) falls on every
            # other kind alike, not always on the one after it.
            shuffle(order)
            for key in order:
                samples[key].append(_timed(runs[key]))
        # Each run beside its own floor alone, back to back: the caches the
        # supervisor's Python path needs stay warm. Any other run between
        # (even a bare bwrap, or a 5 ms pause) evicts them, and that costs the
        # sub-reaper's path more than the few lines of a bare subprocess.run:
        # both figures are printed.
        alone = {
            pair: _alone(runs[pair[0]], runs[pair[1]], shuffle)
            for pair in (("none", "bare"), ("bwrap", "floor"))
        }
        sup.close()
    med = {k: statistics.median(v) for k, v in samples.items()}
    for key, label in (
        ("bare", "bare subprocess bash -c true"),
        ("floor", "minimal fresh bwrap (the floor)"),
        ("none", "execute, sandbox: none (sub-reaper)"),
        ("bwrap", "execute, bwrap, network: off"),
        ("on", "execute, bwrap, network: on (egress)"),
    ):
        print(f"{label:40s} median={med[key]:7.2f} ms  p90={percentile(samples[key], 90):7.2f} ms")
    overhead = med["bwrap"] - med["none"]
    print(
        f"sandbox overhead vs unsandboxed at the median: {overhead:+.2f} ms "
        "(a figure: the floor a run is held to is the minimal-bwrap one)"
    )
    print(
        f"ratio bwrap/none: {med['bwrap'] / med['none']:.2f}; bwrap over bare: {med['bwrap'] - med['bare']:+.2f} ms"
    )
    for key in ("bwrap", "on", "none"):
        print(f"throughput vs the minimal-bwrap floor, {key}: {med['floor'] / med[key]:.2f}x")
    print(
        f"throughput vs the bare floor, none (sub-reaper): {med['bare'] / med['none']:.2f}x "
        "(target >= 0.80x)"
    )
    pairs = zip(samples["floor"], samples["bwrap"], samples["bare"], samples["none"], strict=True)
    ratios = [(f / b, bare / n) for f, b, bare, n in pairs]
    print(
        "medians of the per-round ratios: bwrap vs the minimal-bwrap floor "
        f"{statistics.median(r[0] for r in ratios):.2f}x; none vs bare "
        f"{statistics.median(r[1] for r in ratios):.2f}x"
    )
    print(f"egress (network: on) over network: off: {med['on'] - med['bwrap']:+.2f} ms")
    for (ours, floor), (ratio, ours_ms, floor_ms) in alone.items():
        target = " (target >= 0.80x)" if ours == "none" else ""
        print(
            f"back to back, alone ({PAIRED} rounds): {ours} {ours_ms:.2f} ms, {floor} "
            f"{floor_ms:.2f} ms; median per-round ratio {ratio:.2f}x{target}"
        )


if __name__ == "__main__":
    main()
