"""Per-command cost of the bubblewrap sandbox (issue: isolation the OS enforces).

Runs ``true`` through ``multiplex.execution.execute`` for one profile with
``terminal.sandbox: bwrap`` and one with ``sandbox: none`` (the sub-reaper),
interleaved so both see the same machine load, beside the two floors measured
in the same rounds: a bare ``bash -c true`` subprocess (the floor of ``none``)
and the same command in a minimal fresh bubblewrap sandbox (the floor of
``bwrap``). Prints the medians, the ratios against each floor (targets:
0.8x for both) and the sandbox's overhead at the median against the same
command unsandboxed (a figure; the earlier target of at most 15 ms gave way to
the minimal-bwrap floor). A missed target is printed, not an exit status.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home

from multiplex import Supervisor
from multiplex.execution import bwrap_status, execute

RUNS = 60
# The floor of docs/operations.md#capacity: the same command in a minimal fresh sandbox.
FLOOR = [
    "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-all", "--die-with-parent", "bash", "-c", "true",
]  # fmt: skip


def _timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


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
        for _ in range(RUNS):
            samples["bwrap"].append(_timed(lambda: execute(boxed_scope, "true", hidden=hidden)))
            samples["on"].append(_timed(lambda: execute(egress_scope, "true", hidden=hidden)))
            samples["none"].append(_timed(lambda: execute(plain_scope, "true", hidden=hidden)))
            samples["bare"].append(
                _timed(lambda: subprocess.run(["bash", "-c", "true"], check=True))
            )
            samples["floor"].append(_timed(lambda: subprocess.run(FLOOR, check=True)))
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


if __name__ == "__main__":
    main()
