"""Gateway throughput: runs/s over HTTP against running `true` directly (docs/gateway.md).

Starts `multiplex up` in a subprocess on a free loopback port over 20 generated
profiles (each allowlisting `true`), then for a fixed time N client threads
(httpx) submit one-command runs of `true` round-robin across the profiles and
follow each run's event stream to `run.finished`. Prints runs/s and the
p50/p99 latency from submit to finished, and the floor measured in the same
run: the same number of `bash -c true` through `subprocess.run` from the same
number of threads (what every run costs at least). Then measures
`POST /v1/approvals/test` decisions/s (target: at least 1500/s on 2 cores)
against in-process `Supervisor.test` calls as its own floor.

    .venv/bin/python bench/gateway_throughput.py [--seconds 10] [--clients 8] [--profiles 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home

from multiplex import Supervisor

ADMIN = "bench-admin-token-4242"
PROFILE = """\
terminal:
  cwd: .
command_allowlist: ["true"]
approvals:
  mode: strict
  timeout: 5
"""


def make_homes(root: Path, count: int) -> list[str]:
    names = [f"p{i:02d}" for i in range(count)]
    for name in names:
        write_home(root / "profiles", name, PROFILE, f"MULTIPLEX_TOKEN=tok-{name}-bench\n")
    (root / "multiplex.yaml").write_text(
        f"profiles_dir: profiles\ndefault_profile: {names[0]}\nwatch: {{mode: auto}}\n"
    )
    return names


def start_server(root: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    log = root / "gateway.log"
    env = {**os.environ, "MULTIPLEX_ADMIN_TOKEN": ADMIN}
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "multiplex",
                "--config",
                str(root / "multiplex.yaml"),
                "up",
                "--port",
                "0",
            ],
            stderr=sink,
            stdout=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        match = re.search(r"multiplex gateway on (http://\S+)/", log.read_text(errors="replace"))
        if match:
            return proc, match.group(1), log
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the gateway did not start:\n{log.read_text(errors='replace')}")


def cpu_seconds(pid: int) -> float:
    """User+system CPU seconds a process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(client: httpx.Client, profile: str) -> float:
    """Submit a run of `true`, follow its events to run.finished; seconds taken."""
    began = time.perf_counter()
    r = client.post("/v1/runs", json={"profile": profile, "commands": ["true"]})
    r.raise_for_status()
    run_id = r.json()["run_id"]
    with client.stream("GET", f"/v1/runs/{run_id}/events") as stream:
        event = None
        for line in stream.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "run.finished":
                status = json.loads(line[6:])["status"]
                if status != "completed":
                    raise RuntimeError(f"run {run_id} ended {status}")
                break
    return time.perf_counter() - began


def drive(clients: int, seconds: float, work: object) -> tuple[int, float, list[float]]:
    """Run ``work(client_index, stop)`` on ``clients`` threads; (count, wall, latencies)."""
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []

    def loop(index: int) -> None:
        try:
            work(index, stop, latencies[index])  # type: ignore[operator]
        except BaseException as exc:  # report, do not hang the bench
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(60)
    wall = time.perf_counter() - began
    if errors:
        raise SystemExit(f"a client failed: {errors[0]!r}")
    flat = [x for per in latencies for x in per]
    return len(flat), wall, flat


def bench_runs(
    base: str, names: list[str], clients: int, seconds: float
) -> tuple[int, float, list[float]]:
    def work(index: int, stop: threading.Event, out: list[float]) -> None:
        with httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30
        ) as c:
            n = index
            while not stop.is_set():
                out.append(one_run(c, names[n % len(names)]))
                n += clients

    return drive(clients, seconds, work)


def floor_runs(total: int, clients: int) -> float:
    """Wall seconds for ``total`` `bash -c true` via subprocess.run on ``clients`` threads."""
    per = [total // clients + (1 if i < total % clients else 0) for i in range(clients)]

    def work(count: int) -> None:
        for _ in range(count):
            subprocess.run(["bash", "-c", "true"], check=True)

    threads = [threading.Thread(target=work, args=(n,)) for n in per]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - began


def bench_tests(
    base: str, names: list[str], clients: int, seconds: float
) -> tuple[int, float, list[float]]:
    def work(index: int, stop: threading.Event, out: list[float]) -> None:
        headers = {"Authorization": f"Bearer {ADMIN}"}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as c:
            n = index
            while not stop.is_set():
                body = {"profile": names[n % len(names)], "command": "git push --force origin main"}
                began = time.perf_counter()
                r = c.post("/v1/approvals/test", json=body)
                r.raise_for_status()
                out.append(time.perf_counter() - began)
                n += 1

    return drive(clients, seconds, work)


def floor_tests(root: Path, names: list[str], seconds: float) -> float:
    """In-process ``Supervisor.test`` calls per second (one thread)."""
    sup = Supervisor.from_config(root / "multiplex.yaml")
    try:
        count, began = 0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            sup.test(names[count % len(names)], "git push --force origin main")
            count += 1
        return count / (time.perf_counter() - began)
    finally:
        sup.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--profiles", type=int, default=20)
    parser.add_argument("--test-seconds", type=float, default=5.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = make_homes(root, args.profiles)
        proc, base, log = start_server(root)
        try:
            bench_runs(base, names, args.clients, 1.0)  # warm up
            cpu0 = cpu_seconds(proc.pid)
            runs, wall, lat = bench_runs(base, names, args.clients, args.seconds)
            cpu1 = cpu_seconds(proc.pid)
            tests, twall, tlat = bench_tests(base, names, args.clients, args.test_seconds)
            cpu2 = cpu_seconds(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        floor_wall = floor_runs(runs, args.clients)
        floor_test_rate = floor_tests(root, names, 2.0)
        finished = sum(1 for line in log.read_text().splitlines() if '"run.finished"' in line)

    rate, floor_rate = runs / wall, runs / floor_wall
    test_rate = tests / twall
    print(f"cores: {os.cpu_count()}  profiles: {args.profiles}  clients: {args.clients}")
    print(f"runs of `true` over HTTP: {runs} in {wall:.1f}s = {rate:.0f} runs/s")
    print(
        f"  latency submit -> run.finished: p50 {percentile(lat, 50) * 1000:.1f} ms, "
        f"p99 {percentile(lat, 99) * 1000:.1f} ms, median {statistics.median(lat) * 1000:.1f} ms"
    )
    print(
        f"  server CPU: {(cpu1 - cpu0) / runs * 1e6:.0f} us per run "
        f"({(cpu1 - cpu0) / wall * 100:.0f}% of one core)"
    )
    print(f"floor (subprocess.run bash -c true, same threads): {floor_rate:.0f} runs/s")
    print(f"ratio gateway/floor: {rate / floor_rate:.2f}x of the floor's rate")
    print(
        f"POST /v1/approvals/test: {test_rate:.0f} decisions/s "
        f"(p50 {percentile(tlat, 50) * 1000:.2f} ms, p99 {percentile(tlat, 99) * 1000:.2f} ms); "
        f"target 1500/s: {'met' if test_rate >= 1500 else 'NOT met'}"
    )
    print(
        f"  server CPU: {(cpu2 - cpu1) / tests * 1e6:.0f} us per decision "
        f"({(cpu2 - cpu1) / twall * 100:.0f}% of one core)"
    )
    print(
        f"in-process Supervisor.test: {floor_test_rate:.0f}/s (one thread); "
        f"HTTP ratio {test_rate / floor_test_rate:.2f}x"
    )
    print(f"run.finished log lines: {finished} (every run logged)")


if __name__ == "__main__":
    main()
