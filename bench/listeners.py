"""Many SSE listeners: /healthz and run latency with 0 and N listeners, and memory after (docs/operations.md#capacity).

Starts `multiplex up` in a subprocess on a free loopback port, with two
profiles allowlisting `true`. Three phases, each under the same load (two
client threads submitting runs of `true` with `"wait": 10`, so events flow:
`run.started`, `command.finished`, `run.finished` per run):

1. no listeners: `/healthz` p50/p99 (one keep-alive connection), run p50/p99;
2. N listeners on `/v1/events` with the admin token (raw sockets; one thread
   reads them all, as live clients would): the same figures;
3. the listeners closed: the same figures again.

Prints the ratios of the latencies against phase 1, the events each listener
got, the gateway's RSS before the listeners (and what phase 1's load alone
added: the runs the gateway keeps), with them, three seconds after they
closed (before more load), and across a second round of as many opened and
closed with no load, and the load average (the machine is shared).

With ``--c-allocator`` the gateway runs with ``PYTHONMALLOC=malloc``: what
the streams left is then handed back to the system after they close.

    .venv/bin/python bench/listeners.py [--listeners 500] [--seconds 8] [--c-allocator]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RawHttp, percentile, write_home
from gateway_throughput import ADMIN, start_server

from multiplex.supervision import GatewayConfig

PROFILE = """\
terminal:
  cwd: .
command_allowlist: ["true"]
approvals:
  mode: strict
  timeout: 5
"""


def make_root(root: Path, listeners: int) -> None:
    for name in ("p0", "p1"):
        write_home(
            root / "profiles",
            name,
            PROFILE,
            f"MULTIPLEX_TOKEN=tok-{name}-listeners-bench-0123456789\n",
        )
    caps = ""
    if "max_listeners_per_profile" in GatewayConfig.model_fields:  # the code before had none
        n = listeners + 100
        caps = (
            f"gateway: {{max_connections: {2 * n}, max_connections_per_client: {2 * n},"
            f" max_listeners_per_profile: {n}}}\n"
        )
    (root / "multiplex.yaml").write_text(
        f"profiles_dir: profiles\ndefault_profile: p0\nwatch: {{mode: off}}\n{caps}"
    )


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Healthz:
    """One keep-alive connection asking GET /healthz."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self._sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._file = self._sock.makefile("rb")

    def ask(self) -> float:
        began = time.perf_counter()
        self._sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
        status = self._file.readline()
        length = 0
        while (line := self._file.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        self._file.read(length)
        if b" 200 " not in status:
            raise RuntimeError(f"/healthz answered {status!r}")
        return time.perf_counter() - began

    def close(self) -> None:
        self._file.close()
        self._sock.close()


def phase(base: str, seconds: float) -> tuple[list[float], list[float]]:
    """(healthz latencies, run latencies) while two threads submit runs for ``seconds``."""
    stop = threading.Event()
    runs: list[float] = []
    failed: list[str] = []

    def submit(profile: str) -> None:
        client = RawHttp(base, ADMIN)
        body = json.dumps({"profile": profile, "commands": ["true"], "wait": 10}).encode()
        try:
            while not stop.is_set():
                began = time.perf_counter()
                status, answer = client.post("/v1/runs", body)
                if status != 200 or json.loads(answer)["status"] != "completed":
                    doc = json.loads(answer) if answer.startswith(b"{") else {}
                    failed.append(f"{status} {doc.get('error') or answer[:200]!r}")
                    return
                runs.append(time.perf_counter() - began)
        finally:
            client.close()

    threads = [threading.Thread(target=submit, args=(p,)) for p in ("p0", "p1")]
    for t in threads:
        t.start()
    health = Healthz(base)
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            latencies.append(health.ask())
            time.sleep(0.01)
    finally:
        health.close()
        stop.set()
        for t in threads:
            t.join(60)
    if failed:
        raise SystemExit(f"a run failed: {failed[0]}")
    return latencies, runs


class Listeners:
    """``count`` raw SSE clients on /v1/events, read by one thread until closed."""

    def __init__(self, base: str, count: int) -> None:
        parts = urlsplit(base)
        self.socks: list[socket.socket] = []
        head = f"GET /v1/events HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {ADMIN}\r\n\r\n"
        for _ in range(count):
            sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
            sock.sendall(head.encode())
            got = b""
            while b": connected" not in got:
                chunk = sock.recv(65536)
                if not chunk:
                    raise SystemExit(f"a listener was refused: {got[:300]!r}")
                got += chunk
            sock.setblocking(False)
            self.socks.append(sock)
        self.frames = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with selectors.DefaultSelector() as sel:
            for sock in self.socks:
                sel.register(sock, selectors.EVENT_READ)
            while not self._stop.is_set():
                for key, _ in sel.select(0.2):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        chunk = sock.recv(65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        sel.unregister(sock)
                    self.frames += chunk.count(b"\nevent: ") + chunk.startswith(b"event: ")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        for sock in self.socks:
            sock.close()


def line(name: str, health: list[float], runs: list[float], floor: tuple[float, float]) -> str:
    p50, p99 = percentile(health, 50) * 1e3, percentile(health, 99) * 1e3
    r50, r99 = percentile(runs, 50) * 1e3, percentile(runs, 99) * 1e3
    return (
        f"{name:<22} /healthz p50 {p50:6.2f} ms  p99 {p99:7.2f} ms ({p99 / (floor[0] * 1e3):.2f}x)"
        f"   run p50 {r50:6.1f} ms  p99 {r99:7.1f} ms ({r99 / (floor[1] * 1e3):.2f}x)  [{len(runs)} runs]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listeners", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument(
        "--c-allocator",
        action="store_true",
        help="start the gateway with PYTHONMALLOC=malloc (docs/operations.md#connections-and-streams)",
    )
    args = parser.parse_args()
    if args.c_allocator:
        os.environ["PYTHONMALLOC"] = "malloc"  # the gateway subprocess inherits it
    with tempfile.TemporaryDirectory(prefix="mx-bench-listeners-") as tmp:
        root = Path(tmp) / "config"
        root.mkdir()
        make_root(root, args.listeners)
        proc, base, _log = start_server(root)
        try:
            phase(base, 2.0)  # warm up: imports, the sandbox, the first runs
            rss0 = rss_mb(proc.pid)
            health0, runs0 = phase(base, args.seconds)
            rss_load = rss_mb(proc.pid)  # what a phase of load alone adds (runs kept)
            floor = (percentile(health0, 99), percentile(runs0, 99))
            print(line("0 listeners", health0, runs0, floor))
            listeners = Listeners(base, args.listeners)
            rss1 = rss_mb(proc.pid)
            health1, runs1 = phase(base, args.seconds)
            rss2 = rss_mb(proc.pid)
            print(line(f"{args.listeners} listeners", health1, runs1, floor))
            frames = listeners.frames
            listeners.close()
            time.sleep(3.0)
            rss3 = rss_mb(proc.pid)
            health2, runs2 = phase(base, args.seconds)
            print(line("after they closed", health2, runs2, floor))
            # The same again, with no load: what the first round left is reused, not added to.
            rss4a = rss_mb(proc.pid)
            Listeners(base, args.listeners).close()
            time.sleep(3.0)
            rss4 = rss_mb(proc.pid)
            print(
                f"events read by the listeners: {frames} "
                f"({frames / max(1, args.listeners):.0f} each, {len(runs1)} runs)"
            )
            print(
                f"gateway RSS: {rss_load:.1f} MB before the listeners ({rss_load - rss0:+.1f} MB"
                f" from a phase of load alone), {rss1:.1f} MB with {args.listeners} connected,"
                f" {rss2:.1f} MB after the load with them, {rss3:.1f} MB 3 s after they closed"
                f" ({rss3 - rss_load:+.1f} MB, {rss3 / rss_load:.2f}x); a second round of"
                f" {args.listeners} opened and closed with no load: {rss4a:.1f} -> {rss4:.1f} MB"
                f" ({rss4 - rss4a:+.1f} MB)"
            )
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
