"""What 300 event streams leave behind once they close (docs/operations.md#connections-and-streams).

Every object a stream's connection held is freed (the interpreter's count of
allocated blocks comes back); once a burst of streams has closed, the gateway
collects and hands the C allocator's free memory back to the system, so a
gateway started with ``PYTHONMALLOC=malloc`` returns to its size before the
streams. Real sockets against a real gateway; RSS read from ``/proc``.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from multiplex.gateway.http import _listeners
from multiplex.gateway.http._connections import GuardedHttp
from multiplex.gateway.http._listeners import ListenerSeats
from tests.gateway.conftest import ADMIN, make_homes, start_up
from tests.gateway.test_bounds import _stream, _until

STREAMS = 300
GATEWAY = "gateway: {max_connections: 1000, max_connections_per_client: 800, max_listeners_per_profile: 500}\n"


def _rss_mb(pid: int | str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _burst(port: int) -> None:
    """STREAMS streams opened, all open at once, then closed."""
    socks = [_stream(port, ADMIN) for _ in range(STREAMS)]
    for sock in socks:
        sock.close()


def _blocks_held_and_left(root: Path) -> tuple[int, int]:
    """In a fresh interpreter: the allocated blocks STREAMS open streams hold, and those
    left once they closed and the give-back ran (counted after a first burst)."""
    make_homes(root)
    (root / "multiplex.yaml").write_text(
        "profiles_dir: profiles\ndefault_profile: alpha\nwatch: {mode: off}\n" + GATEWAY
    )
    sup = Supervisor.from_config(root / "multiplex.yaml")
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=2.0).start()
    gw = server.gateway
    try:
        _burst(server.port)  # first use: imports, caches and pools that stay by design
        _until(lambda: len(gw.listeners) == 0 and server.connections.total == 0, "closed")
        time.sleep(_listeners.SETTLE + 0.5)  # its give-back has run
        gc.collect()
        before = sys.getallocatedblocks()
        socks = [_stream(server.port, ADMIN) for _ in range(STREAMS)]
        gc.collect()
        held = sys.getallocatedblocks() - before
        for sock in socks:
            sock.close()
        _until(lambda: len(gw.listeners) == 0 and server.connections.total == 0, "closed")
        time.sleep(_listeners.SETTLE + 0.5)
        gc.collect()
        return held, sys.getallocatedblocks() - before
    finally:
        server.stop()
        sup.close()


def test_every_object_a_burst_of_streams_held_is_freed(tmp_path: Path) -> None:
    # A process of its own: a test worker's other objects come and go meanwhile.
    repo = Path(__file__).resolve().parents[2]
    code = (
        "import sys; from pathlib import Path; "
        "from tests.gateway.test_listener_memory import _blocks_held_and_left as m; "
        "print(*m(Path(sys.argv[1])))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    held, left = int(out[-2]), int(out[-1])
    assert held > 100 * STREAMS, f"{STREAMS} open streams held only {held} blocks"
    # A stream's objects leaking would leave about `held`; the process's own other work
    # (a log line, a metric) stays far below a tenth of it.
    assert left < held * 0.1, f"{left} of the {held} blocks the streams held are still allocated"


def test_a_closed_stream_is_freed_at_once_without_waiting_for_the_cycle_collector(
    tmp_path: Path,
) -> None:
    make_homes(tmp_path)
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=2.0).start()
    gw = server.gateway

    def protocols() -> int:
        return sum(isinstance(o, GuardedHttp) for o in gc.get_objects())

    try:
        gc.collect()
        gc.disable()  # only reference counting frees what follows
        socks = [_stream(server.port, ADMIN) for _ in range(20)]
        assert protocols() >= 20
        for sock in socks:
            sock.close()
        _until(lambda: len(gw.listeners) == 0 and server.connections.total == 0, "closed")
        _until(lambda: protocols() == 0, "every closed connection's protocol freed", timeout=5)
    finally:
        gc.enable()
        server.stop()
        sup.close()


def test_a_gateway_on_the_c_allocator_returns_to_its_size_after_the_streams_close(
    tmp_path: Path,
) -> None:
    make_homes(tmp_path)
    with (tmp_path / "multiplex.yaml").open("a") as config:
        config.write(GATEWAY)
    up = start_up(tmp_path, {"PYTHONMALLOC": "malloc"})
    try:
        port = int(up.api.base.rsplit(":", 1)[1])
        _stream(port, ADMIN).close()  # the first stream's imports stay by design
        time.sleep(1.0)
        before = _rss_mb(up.proc.pid)
        socks = [_stream(port, ADMIN) for _ in range(STREAMS)]
        grown = _rss_mb(up.proc.pid) - before
        for sock in socks:
            sock.close()
        # Closed, settled and given back: within a quarter of what the streams added.
        deadline = time.monotonic() + 30
        while (left := _rss_mb(up.proc.pid) - before) > grown / 4 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        up.stop()
    assert grown > 4.0, f"{STREAMS} open streams grew the gateway by only {grown:.1f} MB"
    assert left <= grown / 4, f"{left:.1f} MB of the {grown:.1f} MB the streams added stayed"


def test_the_seats_give_back_once_a_burst_has_settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_listeners, "SETTLE", 0.3)
    calls: list[int] = []
    idle = threading.Event()

    def on_idle() -> None:
        calls.append(len(seats))
        idle.set()

    seats = ListenerSeats(lambda: 10_000, on_idle=on_idle)
    held = [seats.take("admin") for _ in range(_listeners.BURST * 2)]
    for seat in held[: _listeners.BURST - 1]:
        seat.release()
    time.sleep(0.6)
    assert calls == [], "fewer than BURST closed: nothing to give back"
    for seat in held[_listeners.BURST - 1 :]:
        seat.release()  # the burst, and the rest of it within SETTLE
    assert idle.wait(5)
    time.sleep(0.6)
    assert calls == [0], "one give-back, after every stream of the burst had closed"
    more = [seats.take("admin") for _ in range(_listeners.BURST)]
    for seat in more:
        seat.release()
    _until(lambda: len(calls) == 2, "a second burst given back too", timeout=5)
