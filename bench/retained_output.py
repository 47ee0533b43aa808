"""Finished output held in memory: the gateway's RSS growth with and without the bound (docs/operations.md#finished-output).

Starts `multiplex up` in a subprocess on a free loopback port with one profile
(approvals off), then submits four runs of 25 commands each printing ~1 MiB
(`seq 1 160000`, 1 008 894 bytes) one after the other, each with `"wait"`.
The server's VmRSS is read from /proc before the first run and after the last
(after a short settle). Done twice in fresh servers: "unbounded" sets
`gateway.retained_output_bytes` to its maximum (64 GiB: the old behaviour,
every finished run's output in memory), "bounded" to the value given
(default 16 MiB, below the ~100 MiB printed). Prints both growths, their
ratio, and how much output went to `logs/runs/`.

    .venv/bin/python bench/retained_output.py [--bound-mib 16] [--runs 4] [--commands 25]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_home

ADMIN = "bench-admin-token-retained-0123456789"
PROFILE = """\
terminal:
  cwd: .
  timeout: 120
approvals:
  mode: "off"
"""
COMMAND = "seq 1 160000"  # 1 008 894 bytes
MULTIPLEX = (sys.executable, "-m", "multiplex")


def _rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert match, status
    return int(match.group(1)) * 1024


def _post(base: str, path: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as answer:
        data: dict[str, object] = json.loads(answer.read())
        return data


def measure(bound: int, runs: int, commands: int) -> tuple[int, int]:
    """(RSS growth in bytes, bytes under logs/runs/) for one fresh server."""
    with tempfile.TemporaryDirectory(prefix="mx-retained-") as tmp:
        root = Path(tmp)
        home = write_home(root / "profiles", "bench", PROFILE)
        (root / "multiplex.yaml").write_text(
            "profiles_dir: profiles\ndefault_profile: bench\nwatch: {mode: 'off'}\n"
            f"gateway: {{retained_output_bytes: {bound}}}\n"
        )
        log = root / "gateway.log"
        env = {**os.environ, "MULTIPLEX_ADMIN_TOKEN": ADMIN}
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                [*MULTIPLEX, "--config", str(root / "multiplex.yaml"), "up", "--port", "0"],
                stderr=sink,
                stdout=subprocess.DEVNULL,
                env=env,
                cwd=root,
            )
        try:
            base = ""
            for _ in range(600):
                found = re.search(r"multiplex gateway on (http://\S+)/", log.read_text("utf-8"))
                if found:
                    base = found.group(1)
                    break
                if proc.poll() is not None:
                    raise SystemExit(log.read_text())
                time.sleep(0.05)
            assert base, "the gateway did not start"
            # One small run first: every import and pool is warm before "before".
            _post(base, "/v1/runs", {"profile": "bench", "commands": ["true"], "wait": 60})
            time.sleep(0.5)
            before = _rss(proc.pid)
            for _ in range(runs):
                done = _post(
                    base,
                    "/v1/runs",
                    {"profile": "bench", "commands": [COMMAND] * commands, "wait": 300},
                )
                assert done["status"] == "completed", done
            time.sleep(1.0)
            after = _rss(proc.pid)
            folder = home / "logs/runs"
            spilled = sum(p.stat().st_size for p in folder.glob("*.json")) if folder.is_dir() else 0
            return after - before, spilled
        finally:
            proc.terminate()
            proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bound-mib", type=int, default=16)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--commands", type=int, default=25)
    args = parser.parse_args()
    printed = args.runs * args.commands * 1_008_894
    print(f"{args.runs} runs x {args.commands} x ~1 MiB: {printed / 2**20:.0f} MiB printed")
    unbounded, _ = measure(64 * 1024**3, args.runs, args.commands)
    print(f"unbounded (retained_output_bytes 64 GiB): RSS grew {unbounded / 2**20:.0f} MiB")
    bounded, spilled = measure(args.bound_mib * 2**20, args.runs, args.commands)
    print(
        f"bounded (retained_output_bytes {args.bound_mib} MiB): RSS grew "
        f"{bounded / 2**20:.0f} MiB, {spilled / 2**20:.0f} MiB in logs/runs/"
    )
    print(f"ratio bounded/unbounded: {bounded / unbounded:.2f}" if unbounded > 0 else "")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
