"""Two nodes sharing Redis against one node alone, in the same run (docs/cluster.md).

Starts a real redis-server on a free loopback port and `multiplex up` nodes
over the same generated profiles. With 8 client threads for a fixed time each:

- runs/s: one-command runs of `true` (allowlisted) submitted with ``"wait"``;
- approvals answered/s: a run of a command that asks, submitted with ``"wait"``;
  two approvers (what the dashboard does) follow ``/v1/events`` and answer the
  prompts, nothing polls. Alone, both are on the one node; in the cluster one
  is on each node, and each prompt is answered on the node its run was not
  created on.

Phase 1 is one node in single-process mode (no Redis); phase 2 two cluster
nodes, clients alternating between them; the pair of phases is repeated
``--rounds`` times, interleaved (this machine's speed drifts by 10-20 % from one
minute to the next), and each figure is the median over the rounds, each ratio
the median of the rounds' ratios, with their range. Prints both figures and the ratio,
the Redis round trips per run (from the nodes' /metrics, minus the idle
background of heartbeats and probes measured for the same time; target at
most 6) and the nodes' CPU seconds per run against one node's (target at most
1.3x). Then the cross-node revocation latency: a rule removed by hand from
`config.yaml`, seen by node A's watcher, until node B (which watches nothing)
refuses to auto-approve it; p50/p99 (target p99 at most 200 ms), with the same
measurement on A itself as the baseline.

    .venv/bin/python bench/cluster.py [--seconds 8] [--clients 8] [--rounds 3] [--samples 40]
        [--profile-to FOLDER]   # py-spy every node in every phase (the figures drop)
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import percentile, write_home
from _spy import Spy

ADMIN = "bench-admin-token-cluster-0123456789"
PROFILE = """\
terminal:
  cwd: .
command_allowlist: ["true", "printf keep *"{extra}]
approvals:
  mode: strict
  timeout: 60
"""
NAMES = [f"p{i}" for i in range(4)]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_redis(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (make bench installs it)")
    port = free_port()
    password = secrets.token_hex(16)  # docs/cluster.md#authentication: a node refuses none
    proc = subprocess.Popen(
        [
            binary,
            *("--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
            *("--requirepass", password),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=root,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            import redis

            if redis.Redis(port=port, password=password).ping():
                return proc, f"redis://:{password}@127.0.0.1:{port}/0"
        except Exception:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


class Node:
    def __init__(self, root: Path, name: str, cluster: str | None, watch: str = "auto") -> None:
        self.name = name
        folder = root / f"node-{name}"
        folder.mkdir()
        text = f"profiles_dir: {root / 'profiles'}\ndefault_profile: p0\n"
        text += f"watch: {{mode: {watch}, debounce_ms: 20}}\n"
        if cluster:
            text += f"cluster: {{redis_url: '{cluster}', node_id: {name}}}\n"
        (folder / "multiplex.yaml").write_text(text)
        self.log = folder / "node.log"
        env = {k: v for k, v in os.environ.items() if k != "MULTIPLEX_REDIS_URL"}
        env["MULTIPLEX_ADMIN_TOKEN"] = ADMIN
        with self.log.open("wb") as sink:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "multiplex",
                    "--config",
                    str(folder / "multiplex.yaml"),
                    "up",
                    "--port",
                    "0",
                ],
                stderr=sink,
                stdout=subprocess.DEVNULL,
                env=env,
                cwd=folder,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(r"multiplex gateway on (http://\S+)/", self.log.read_text("utf-8"))
            if found:
                self.base = found.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"node {name} did not start:\n{self.log.read_text('utf-8')}")

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60
        )

    def round_trips(self) -> float:
        with self.client() as c:
            text = c.get("/metrics").text
        found = re.search(r"^multiplex_cluster_redis_round_trips_total (\S+)$", text, re.M)
        return float(found.group(1)) if found else 0.0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def drive(clients: int, seconds: float, work: Callable[[int, threading.Event], int]) -> int:
    stop = threading.Event()
    counts = [0] * clients
    errors: list[BaseException] = []

    def loop(index: int) -> None:
        try:
            counts[index] = work(index, stop)
        except BaseException as exc:
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(120)
    if errors:
        raise SystemExit(f"a client failed: {errors[0]!r}")
    return sum(counts)


def incomplete(r: httpx.Response) -> None:
    """Raise, saying why, unless ``r`` is a completed run."""
    doc = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
    if r.status_code != 200 or doc.get("status") != "completed":
        why = {k: doc.get(k) for k in ("status", "error", "results")} if doc else r.text[:300]
        raise RuntimeError(f"run did not complete: {r.status_code} {why}")


def runs_work(nodes: list[Node]) -> Callable[[int, threading.Event], int]:
    def work(index: int, stop: threading.Event) -> int:
        done = 0
        with nodes[index % len(nodes)].client() as c:
            while not stop.is_set():
                body = {"profile": NAMES[index % len(NAMES)], "commands": ["true"], "wait": 30}
                r = c.post("/v1/runs", json=body)
                incomplete(r)
                done += 1
        return done

    return work


class Approver:
    """What a dashboard does: one ``/v1/events`` stream on a node, answering there.

    There are always two (the same listeners in both phases): approver ``slot``
    answers the prompts of the clients whose index is ``slot - 1`` modulo 2.
    In the cluster they sit on different nodes, so each prompt is answered on
    the node its run was not created on.
    """

    SLOTS = 2

    def __init__(self, node: Node, slot: int, answerers: int = 4) -> None:
        self._slot = slot
        self._client = node.client()
        self._queue: queue.SimpleQueue[tuple[str, str] | None] = queue.SimpleQueue()
        self._connected = threading.Event()
        self.errors: list[BaseException] = []
        self._threads = [threading.Thread(target=self._read, daemon=True)]
        self._threads += [
            threading.Thread(target=self._answer, args=(node,), daemon=True)
            for _ in range(answerers)
        ]
        for t in self._threads:
            t.start()
        if not self._connected.wait(10):
            raise SystemExit(f"no event stream on node {node.name}")

    def _mine(self, command: str) -> bool:
        found = re.fullmatch(r"printf ask-(\d+)-\d+", command)
        return bool(found) and (int(found.group(1)) + 1) % self.SLOTS == self._slot

    def _read(self) -> None:
        try:
            with self._client.stream("GET", "/v1/events", timeout=None) as stream:
                name = ""
                for line in stream.iter_lines():
                    if line.startswith(": connected"):
                        self._connected.set()
                    elif line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name == "approval.request":
                        data = json.loads(line[6:])
                        if self._mine(data["command"]):
                            self._queue.put((data["run_id"], data["approval_id"]))
        except Exception as exc:  # the stream is closed at the end of the phase
            if not self._closing:
                self.errors.append(exc)

    _closing = False

    def _answer(self, node: Node) -> None:
        with node.client() as c:
            while (item := self._queue.get()) is not None:
                run_id, approval_id = item
                answer = {"approval_id": approval_id, "choice": "once"}
                r = c.post(f"/v1/runs/{run_id}/approval", json=answer)
                if r.status_code != 200:
                    self.errors.append(RuntimeError(f"answer refused: {r.status_code} {r.text}"))

    def close(self) -> None:
        self._closing = True
        for _ in self._threads[1:]:
            self._queue.put(None)
        self._client.close()
        for t in self._threads:
            t.join(10)
        if self.errors:
            raise SystemExit(f"an approver failed: {self.errors[0]!r}")


def approvals_work(nodes: list[Node]) -> Callable[[int, threading.Event], int]:
    def work(index: int, stop: threading.Event) -> int:
        done = 0
        with nodes[index % len(nodes)].client() as c:
            while not stop.is_set():
                command = f"printf ask-{index}-{done}"
                body = {"profile": NAMES[index % len(NAMES)], "commands": [command], "wait": 30}
                r = c.post("/v1/runs", json=body)
                incomplete(r)
                done += 1
        return done

    return work


def measure(
    nodes: list[Node],
    clients: int,
    seconds: float,
    redis_pid: int | None,
    spy_to: Path | None = None,
) -> dict[str, float]:
    idle_trips = sum(n.round_trips() for n in nodes)
    time.sleep(2.0)
    idle_rate = (sum(n.round_trips() for n in nodes) - idle_trips) / 2.0
    out: dict[str, float] = {}
    for name, work in (("runs", runs_work(nodes)), ("approvals", approvals_work(nodes))):
        approvers = (
            [Approver(nodes[slot % len(nodes)], slot) for slot in range(Approver.SLOTS)]
            if name == "approvals"
            else []
        )
        trips = sum(n.round_trips() for n in nodes)
        cpu = sum(cpu_seconds(n.proc.pid) for n in nodes)
        rcpu = cpu_seconds(redis_pid) if redis_pid else 0.0
        spies = (
            [Spy(n.proc.pid, spy_to / f"cluster_{n.name}_{name}.raw") for n in nodes]
            if spy_to
            else []
        )
        began = time.perf_counter()
        count = drive(clients, seconds, work)
        wall = time.perf_counter() - began
        for approver in approvers:
            approver.close()
        for spy in spies:
            print(f"profile: {spy.stop()}")
        out[f"{name}_per_s"] = count / wall
        out[f"{name}_cpu_ms"] = (sum(cpu_seconds(n.proc.pid) for n in nodes) - cpu) / count * 1e3
        out[f"{name}_redis_cpu_ms"] = (
            ((cpu_seconds(redis_pid) - rcpu) / count * 1e3) if redis_pid else 0.0
        )
        spent = sum(n.round_trips() for n in nodes) - trips - idle_rate * wall
        out[f"{name}_trips"] = max(0.0, spent) / count
    return out


def verdict(c: httpx.Client, command: str) -> str:
    r = c.post("/v1/approvals/test", json={"profile": "p0", "command": command})
    return str(r.json()["outcome"])


def revocation(root: Path, watcher: Node, seer: Node, samples: int) -> list[float]:
    """Seconds from a hand revocation saved to the file until ``seer`` asks."""
    config = root / "profiles" / "p0" / "config.yaml"
    latencies: list[float] = []
    with seer.client() as c:
        for i in range(samples):
            rule = f"printf rev{i} *"
            config.write_text(PROFILE.format(extra=f', "{rule}"'))
            while verdict(c, f"printf rev{i} x") != "approved":
                time.sleep(0.005)
            time.sleep(0.1)
            config.write_text(PROFILE.format(extra=""))
            # From the saved edit: a write that itself stalls (this machine's disk
            # took up to 270 ms now and then) is nobody's latency but the disk's.
            began = time.perf_counter()
            while verdict(c, f"printf rev{i} x") == "approved":
                pass
            latencies.append(time.perf_counter() - began)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument(
        "--profile-to", type=Path, default=None, help="a folder: py-spy each node per phase"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mx-cluster-bench-"))
    for name in NAMES:
        write_home(
            root / "profiles",
            name,
            PROFILE.format(extra=""),
            f"MULTIPLEX_TOKEN=bench-cluster-token-{name}-0123456789\n",
        )
    if args.profile_to is not None:
        args.profile_to.mkdir(parents=True, exist_ok=True)
    redis_proc, url = start_redis(root)
    started: list[Node] = []
    ones: list[dict[str, float]] = []
    twos: list[dict[str, float]] = []
    try:
        alone = Node(root, "alone", None)
        a = Node(root, "a", url, watch="auto")
        b = Node(root, "b", url, watch="off")  # like NFS: only the signal tells it
        started += [alone, a, b]
        for _ in range(args.rounds):
            ones.append(measure([alone], args.clients, args.seconds, None, args.profile_to))
            twos.append(
                measure([a, b], args.clients, args.seconds, redis_proc.pid, args.profile_to)
            )
        alone.stop()
        same = revocation(root, a, a, args.samples // 2)
        across = revocation(root, a, b, args.samples)
    finally:
        for node in started:
            if node.proc.poll() is None:
                node.stop()
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)

    def median(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(row[key] for row in rows)

    def ratios(key: str) -> str:
        each = [two[key] / one[key] for one, two in zip(ones, twos, strict=True)]
        return f"{statistics.median(each):.2f}x (rounds {min(each):.2f}-{max(each):.2f})"

    print(
        f"clients {args.clients}, {args.seconds:g} s per phase, {args.rounds} rounds (medians);"
        " nodes share 2 cores"
    )
    for kind in ("runs", "approvals"):
        rate, cpu = f"{kind}_per_s", f"{kind}_cpu_ms"
        print(
            f"{kind:9s}/s   one node {median(ones, rate):7.1f}   two nodes "
            f"{median(twos, rate):7.1f}   ratio {ratios(rate)}"
        )
        print(
            f"{kind:9s} cpu  one node {median(ones, cpu):6.2f} ms   two nodes "
            f"{median(twos, cpu):6.2f} ms   {ratios(cpu)}, target <= 1.3x   "
            f"redis {median(twos, f'{kind}_redis_cpu_ms'):.2f} ms"
        )
        trips = median(twos, f"{kind}_trips")
        print(f"{kind:9s} redis round trips per run {trips:.1f} (target <= 6)")
    for label, values in (("same node", same), ("across nodes", across)):
        p50, p99 = percentile(values, 50) * 1e3, percentile(values, 99) * 1e3
        print(f"revocation {label:12s} p50 {p50:6.1f} ms   p99 {p99:6.1f} ms   n={len(values)}")
    print("target: across nodes p99 <= 200 ms")


if __name__ == "__main__":
    main()
