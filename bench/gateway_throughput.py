"""Gateway throughput: runs/s over HTTP against running `true` directly (docs/gateway.md).

Starts `multiplex up` in a subprocess on a free loopback port over 20 generated
profiles (each allowlisting `true`), then for a fixed time N client threads
(each one keep-alive connection) submit one-command runs of `true` with
`"wait": 10` round-robin across the profiles: one request answered with the
finished run. Prints runs/s and the p50/p99 latency from submit to finished,
and the floor measured in the same run: `bash -c true` through
`subprocess.run` from the same number of threads (what every run costs at
least), and the minimal fresh bubblewrap sandbox of the same command (the
floor of docs/operations.md#capacity: target 0.8x of its rate, p99 at most
2x its p99). `--profile-to PREFIX` records the server with py-spy. Then measures
`POST /v1/approvals/test` decisions/s (target: at least 4000/s on 2 cores, at
most 150 us of server CPU per request beyond the in-process decision) against
in-process `Supervisor.test` calls as its own floor. The floors are measured
before and after the gateway runs, and the load average is printed: the
machine is shared.

    .venv/bin/python bench/gateway_throughput.py [--seconds 10] [--clients 8] [--profiles 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RawHttp, percentile, write_home

from multiplex import Supervisor
from multiplex.execution import execute

ADMIN = "bench-admin-token-4242-0123456789"
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
        write_home(
            root / "profiles", name, PROFILE, f"MULTIPLEX_TOKEN=tok-{name}-bench-0123456789\n"
        )
    (root / "multiplex.yaml").write_text(
        f"profiles_dir: profiles\ndefault_profile: {names[0]}\nwatch: {{mode: auto}}\n"
    )
    return names


def start_server(root: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    # The log is written beside the config folder ``root``, not in it: the watcher
    # watches the folder of multiplex.yaml, and a log line written there would wake it
    # for every run (docs/operations.md#capacity), which a deployment logging to
    # journald never pays. ``root`` is a folder of its own inside a temporary one.
    log = root.parent / "gateway.log"
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


def start_py_spy(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy recording every thread of the server (speedscope format) until SIGINT."""
    spy = Path(sys.executable).with_name("py-spy")
    return subprocess.Popen(
        [
            *(str(spy), "record", "--pid", str(pid), "--format", "speedscope"),
            *("--output", str(out), "--rate", "200", "--threads"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def spying(pid: int, prefix: Path | None, phase: str) -> subprocess.Popen[bytes] | None:
    if prefix is None:
        return None
    return start_py_spy(pid, prefix.with_name(f"{prefix.name}-{phase}.speedscope.json"))


def stop_spying(spy: subprocess.Popen[bytes] | None) -> None:
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(60)


def cpu_seconds(pid: int) -> float:
    """User+system CPU seconds a process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(client: RawHttp, profile: str) -> float:
    """One request: a run of `true` with ``"wait": 10``, answered with the finished run."""
    began = time.perf_counter()
    body = json.dumps({"profile": profile, "commands": ["true"], "wait": 10}).encode()
    status, answer = client.post("/v1/runs", body)
    if status != 200 or json.loads(answer)["status"] != "completed":
        raise RuntimeError(f"run ended {status} {answer[:200]!r}")
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
        client = RawHttp(base, ADMIN)
        try:
            n = index
            while not stop.is_set():
                out.append(one_run(client, names[n % len(names)]))
                n += clients
        finally:
            client.close()

    return drive(clients, seconds, work)


def floor_runs(clients: int, seconds: float) -> float:
    """Runs/s of `bash -c true` via subprocess.run on ``clients`` threads for ``seconds``."""

    def work(index: int, stop: threading.Event, out: list[float]) -> None:
        while not stop.is_set():
            began = time.perf_counter()
            subprocess.run(["bash", "-c", "true"], check=True)
            out.append(time.perf_counter() - began)

    count, wall, _lat = drive(clients, seconds, work)
    return count / wall


# The floor of docs/operations.md#capacity: the same command in a minimal fresh sandbox.
BWRAP_FLOOR = [
    "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-all", "--die-with-parent", "bash", "-c", "true",
]  # fmt: skip


def floor_bwrap(clients: int, seconds: float) -> tuple[float, list[float]]:
    """Runs/s and latencies of the minimal fresh bwrap sandbox on ``clients`` threads."""

    def work(index: int, stop: threading.Event, out: list[float]) -> None:
        while not stop.is_set():
            began = time.perf_counter()
            subprocess.run(BWRAP_FLOOR, check=True)
            out.append(time.perf_counter() - began)

    count, wall, lat = drive(clients, seconds, work)
    return count / wall, lat


def floor_execute(root: Path, clients: int, seconds: float) -> tuple[float, str]:
    """Runs/s of `true` through ``execute`` in process, in the profile's own sandbox.

    The process every run starts (bwrap, or the sub-reaper) without the gateway:
    what the HTTP path costs beyond it is the gateway's own work.
    """
    sup = Supervisor.from_config(root / "multiplex.yaml")
    try:
        name = next(iter(sup.profiles))
        with sup.turn(name, "floor", "api") as scope:
            pass
        hidden = sup.hidden_paths
        sandbox = execute(scope, "true", hidden=hidden).sandbox  # also warms the path

        def work(index: int, stop: threading.Event, out: list[float]) -> None:
            while not stop.is_set():
                began = time.perf_counter()
                if execute(scope, "true", hidden=hidden).exit_code != 0:
                    raise RuntimeError("`true` failed in the sandbox")
                out.append(time.perf_counter() - began)

        count, wall, _lat = drive(clients, seconds, work)
        return count / wall, sandbox
    finally:
        sup.close()


def bench_tests(
    base: str, names: list[str], clients: int, seconds: float
) -> tuple[int, float, list[float]]:
    bodies = [
        json.dumps({"profile": name, "command": "git push --force origin main"}).encode()
        for name in names
    ]

    def work(index: int, stop: threading.Event, out: list[float]) -> None:
        client = RawHttp(base, ADMIN)
        try:
            n = index
            while not stop.is_set():
                began = time.perf_counter()
                status, body = client.post("/v1/approvals/test", bodies[n % len(bodies)])
                if status != 200 or b'"outcome"' not in body:
                    raise RuntimeError(f"approvals/test answered {status}: {body[:200]!r}")
                out.append(time.perf_counter() - began)
                n += 1
        finally:
            client.close()

    return drive(clients, seconds, work)


def floor_tests(root: Path, names: list[str], seconds: float) -> tuple[float, float]:
    """In-process ``Supervisor.test``: calls per second and CPU microseconds per call."""
    sup = Supervisor.from_config(root / "multiplex.yaml")
    try:
        count, began, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - began < seconds:
            sup.test(names[count % len(names)], "git push --force origin main")
            count += 1
        wall, used = time.perf_counter() - began, time.process_time() - cpu
        return count / wall, used / count * 1e6
    finally:
        sup.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--profiles", type=int, default=20)
    parser.add_argument("--test-seconds", type=float, default=5.0)
    parser.add_argument(
        "--profile-to",
        type=Path,
        default=None,
        help="record the server with py-spy while measured: PREFIX-runs/-tests.speedscope.json",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "config"
        root.mkdir()
        names = make_homes(root, args.profiles)
        # The floors are measured before and after the gateway (the machine is
        # shared: its load drifts); the mean of the two is the baseline.
        floor_before = floor_runs(args.clients, args.seconds / 2)
        boxed_before, sandbox = floor_execute(root, args.clients, args.seconds / 2)
        minimal_before, minimal_lat = floor_bwrap(args.clients, args.seconds / 2)
        decide_before = floor_tests(root, names, 2.0)
        proc, base, log = start_server(root)
        try:
            bench_runs(base, names, args.clients, 1.0)  # warm up
            spy = spying(proc.pid, args.profile_to, "runs")
            cpu0 = cpu_seconds(proc.pid)
            runs, wall, lat = bench_runs(base, names, args.clients, args.seconds)
            cpu1 = cpu_seconds(proc.pid)
            stop_spying(spy)
            bench_tests(base, names, args.clients, 0.5)  # warm up
            spy = spying(proc.pid, args.profile_to, "tests")
            cpu2 = cpu_seconds(proc.pid)
            tests, twall, tlat = bench_tests(base, names, args.clients, args.test_seconds)
            cpu3 = cpu_seconds(proc.pid)
            stop_spying(spy)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        floor_after = floor_runs(args.clients, args.seconds / 2)
        boxed_after, _ = floor_execute(root, args.clients, args.seconds / 2)
        minimal_after, minimal_lat_after = floor_bwrap(args.clients, args.seconds / 2)
        minimal_lat += minimal_lat_after
        decide_after = floor_tests(root, names, 2.0)
        finished = sum(1 for line in log.read_text().splitlines() if '"run.finished"' in line)

    rate, floor_rate = runs / wall, (floor_before + floor_after) / 2
    test_rate = tests / twall
    decide_rate = (decide_before[0] + decide_after[0]) / 2
    decide_cpu = (decide_before[1] + decide_after[1]) / 2
    per_decision = (cpu3 - cpu2) / tests * 1e6
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}  profiles: {args.profiles}  clients: {args.clients}")
    print(f"machine load average (1, 5, 15 min): {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f'runs of `true` over HTTP ("wait"): {runs} in {wall:.1f}s = {rate:.0f} runs/s')
    print(
        f"  latency submit -> run.finished: p50 {percentile(lat, 50) * 1000:.1f} ms, "
        f"p99 {percentile(lat, 99) * 1000:.1f} ms (target p99 <= 20 ms)"
    )
    print(
        f"  server CPU: {(cpu1 - cpu0) / runs * 1e6:.0f} us per run "
        f"({(cpu1 - cpu0) / wall * 100:.0f}% of one core)"
    )
    print(
        f"floor (subprocess.run bash -c true, same threads): {floor_rate:.0f} runs/s "
        f"(before {floor_before:.0f}, after {floor_after:.0f})"
    )
    print(f"ratio gateway/floor: {rate / floor_rate:.2f}x of the floor's rate (target >= 0.40x)")
    boxed_rate = (boxed_before + boxed_after) / 2
    print(
        f"floor with the run's own process (in-process execute, sandbox {sandbox}, same threads): "
        f"{boxed_rate:.0f} runs/s (before {boxed_before:.0f}, after {boxed_after:.0f}); "
        f"ratio gateway/that floor: {rate / boxed_rate:.2f}x"
    )
    minimal_rate = (minimal_before + minimal_after) / 2
    print(
        f"minimal-bwrap floor ({' '.join(BWRAP_FLOOR[:1])} --ro-bind / / ... --unshare-all, same "
        f"threads): {minimal_rate:.0f} runs/s (before {minimal_before:.0f}, after "
        f"{minimal_after:.0f}), p99 {percentile(minimal_lat, 99) * 1000:.1f} ms; "
        f"ratio gateway/that floor: {rate / minimal_rate:.2f}x (target >= 0.80x); "
        f"p99 ratio {percentile(lat, 99) / percentile(minimal_lat, 99):.2f}x (target <= 2x)"
    )
    print(
        f"POST /v1/approvals/test: {test_rate:.0f} decisions/s "
        f"(p50 {percentile(tlat, 50) * 1000:.2f} ms, p99 {percentile(tlat, 99) * 1000:.2f} ms); "
        f"target 4000/s: {'met' if test_rate >= 4000 else 'NOT met'}"
    )
    print(
        f"  server CPU: {per_decision:.0f} us per decision "
        f"({(cpu3 - cpu2) / twall * 100:.0f}% of one core); "
        f"beyond the in-process decision: {per_decision - decide_cpu:.0f} us (target <= 150 us)"
    )
    print(
        f"in-process Supervisor.test: {decide_rate:.0f}/s, {decide_cpu:.0f} us CPU each "
        f"(one thread); HTTP ratio {test_rate / decide_rate:.2f}x"
    )
    print(f"run.finished log lines: {finished} (every run logged)")


if __name__ == "__main__":
    main()
