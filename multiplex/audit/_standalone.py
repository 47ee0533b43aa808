"""Launch one standalone probe process per profile, in parallel (docs/audit.md (b)).

Each probe is a real ``multiplex --config <sandbox config> -p NAME audit
--probe --json`` process started in the profile's (sandbox) home, with the
canary manifest named by ``MULTIPLEX_AUDIT_CANARIES``. At most ``jobs`` run at
once (default: the CPU count).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiplex.audit._canaries import CANARY_MANIFEST_ENV

__all__ = ["PROBE_ENTRY", "ProbeResult", "Progress", "probe_argv", "run_probes"]

# docs/audit.md: the probe is the real CLI, `multiplex -p NAME audit --probe --json`,
# run with this interpreter so it sees the same installation.
PROBE_ENTRY = ("-m", "multiplex")

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe's answer, or why there is none."""

    profile: str
    surfaces: Mapping[str, Any] = field(default_factory=dict)
    digests: Mapping[str, str] = field(default_factory=dict)
    leaks: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None
    seconds: float = 0.0


def probe_argv(config: Path, name: str) -> list[str]:
    """The command line of the probe for profile ``name``."""
    return [
        sys.executable,
        *PROBE_ENTRY,
        "--config",
        str(config),
        "-p",
        name,
        "audit",
        "--probe",
        "--json",
    ]


def _run_one(
    config: Path, name: str, home: Path, env: Mapping[str, str], timeout: float
) -> ProbeResult:
    started = time.monotonic()
    try:
        done = subprocess.run(
            probe_argv(config, name),
            cwd=home,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(name, error=f"probe timed out after {timeout:g}s", seconds=timeout)
    seconds = time.monotonic() - started
    try:
        data = json.loads(done.stdout)
    except ValueError:
        data = None
    if done.returncode != 0 or not isinstance(data, dict) or "digests" not in data:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return ProbeResult(name, error=f"probe exited {done.returncode}: {last}", seconds=seconds)
    return ProbeResult(
        name,
        surfaces=data.get("surfaces", {}),
        digests=data["digests"],
        leaks=tuple(data.get("leaks", ())),
        notes=tuple(data.get("notes", ())),
        seconds=seconds,
    )


def run_probes(
    config: Path,
    homes: Mapping[str, Path],
    names: Sequence[str],
    manifest: Path,
    *,
    jobs: int | None = None,
    timeout: float = 120.0,
    progress: Progress | None = None,
) -> dict[str, ProbeResult]:
    """Run every profile's probe, ``jobs`` at a time; report progress as they finish."""
    env = dict(os.environ)
    env[CANARY_MANIFEST_ENV] = str(manifest)
    env.pop("MULTIPLEX_CONFIG", None)  # --config is explicit
    workers = max(1, jobs or os.cpu_count() or 1)
    results: dict[str, ProbeResult] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="audit-probe") as pool:
        futures = {pool.submit(_run_one, config, n, homes[n], env, timeout): n for n in names}
        for done_count, future in enumerate(as_completed(futures), start=1):
            name = futures[future]
            results[name] = future.result()
            if progress is not None:
                progress(done_count, len(futures), name)
    return results
