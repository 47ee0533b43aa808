"""Slow, half-open and many clients: the connection caps, the head deadline, the listener cap.

Real sockets against a real gateway (docs/operations.md#connections-and-streams).
Every client here is on loopback; "another client" is another loopback address
(Linux routes all of 127/8 to ``lo``), bound before connecting.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from multiplex import ConfigError, Supervisor
from multiplex.gateway import GatewayServer, create_app
from multiplex.supervision import GatewayConfig
from multiplex.supervision._config import (
    RESERVED_DESCRIPTORS,
    descriptor_limit,
    load_supervisor_config,
)
from tests.gateway.conftest import ADMIN, TOKENS, Api, make_homes

PER_CLIENT_503 = b"too many connections from this address (gateway.max_connections_per_client)"
TOTAL_503 = b"too many connections (gateway.max_connections)"
PARTIAL_HEAD = b"GET /healthz HTTP/1.1\r\nHost: flood\r\nX-Slow: "


class Served:
    def __init__(self, server: GatewayServer, sup: Supervisor) -> None:
        self.server, self.sup = server, sup
        self.port = server.port
        self.base = server.url.rstrip("/")
        self.admin = Api(self.base, ADMIN)
        self.alpha = Api(self.base, TOKENS["alpha"])
        self.beta = Api(self.base, TOKENS["beta"])


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[str], Served]]:
    started: list[Served] = []

    def start(gateway: str) -> Served:
        make_homes(tmp_path)
        (tmp_path / "multiplex.yaml").write_text(
            textwrap.dedent(
                """\
                profiles_dir: profiles
                default_profile: alpha
                watch: {mode: off}
                """
            )
            + (f"gateway: {{{gateway}}}\n" if gateway else "")
        )
        sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
        server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=2.0)
        started.append(Served(server.start(), sup))
        return started[-1]

    yield start
    for s in started:
        s.server.stop()
        s.sup.close()


def _connect(port: int, source: str = "127.0.0.1", send: bytes = b"") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    if send:
        sock.sendall(send)
    return sock


def _until_closed(sock: socket.socket) -> bytes:
    """What the server sent before it closed the connection (a reset counts as closed)."""
    got = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            got += chunk
    return got


def _until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.02)


def _healthz(port: int, source: str = "127.0.0.1") -> bytes:
    with _connect(
        port, source, b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    ) as s:
        return _until_closed(s)


def _close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


# -- gateway.max_connections_per_client, gateway.max_connections ----------------------------


def test_connections_over_the_per_client_cap_are_refused_at_once_while_others_are_served(
    serve: Callable[[str], Served],
) -> None:
    s = serve("max_connections: 200, max_connections_per_client: 50, header_timeout_s: 120")
    guard = s.server.connections
    flood = [_connect(s.port, "127.0.0.2", PARTIAL_HEAD) for _ in range(50)]
    try:
        _until(lambda: guard.held("127.0.0.2") == 50, "50 half-open connections held")
        for _ in range(10):  # one more each time: answered and closed, never held
            with _connect(s.port, "127.0.0.2") as extra:
                answer = _until_closed(extra)
            assert answer.startswith(b"HTTP/1.1 503 ") and PER_CLIENT_503 in answer
        assert guard.held("127.0.0.2") == 50
        assert guard.refused["per_client"] == 10
        # Everyone else is served meanwhile: health, a run, another address.
        assert _healthz(s.port).startswith(b"HTTP/1.1 200 ")
        assert _healthz(s.port, "127.0.0.3").startswith(b"HTTP/1.1 200 ")
        run = s.alpha.post("/v1/runs", json={"commands": ["true"], "wait": 20})
        assert run.status_code == 200 and run.json()["status"] == "completed", run.text
        metrics = s.admin.get("/metrics").text
        assert 'multiplex_gateway_connections_refused_total{cap="per_client"} 10.0' in metrics
    finally:
        _close_all(flood)
    _until(lambda: guard.held("127.0.0.2") == 0, "the flood's connections released")
    with _connect(s.port, "127.0.0.2", b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n") as again:
        assert again.recv(12) == b"HTTP/1.1 200"


def test_the_total_cap_holds_across_addresses(serve: Callable[[str], Served]) -> None:
    s = serve("max_connections: 60, max_connections_per_client: 40, header_timeout_s: 120")
    guard = s.server.connections
    first = [_connect(s.port, "127.0.0.2", PARTIAL_HEAD) for _ in range(40)]
    second = [_connect(s.port, "127.0.0.3", PARTIAL_HEAD) for _ in range(20)]
    try:
        _until(lambda: guard.total == 60, "60 connections held")
        for source in ("127.0.0.4", "127.0.0.1"):
            with _connect(s.port, source) as extra:
                answer = _until_closed(extra)
            assert answer.startswith(b"HTTP/1.1 503 ") and TOTAL_503 in answer
        assert guard.total == 60 and guard.refused["total"] == 2
        _close_all(second[:10])
        _until(lambda: guard.total == 50, "ten places free again")
        assert _healthz(s.port, "127.0.0.4").startswith(b"HTTP/1.1 200 ")
    finally:
        _close_all(first + second)


@pytest.mark.slow
def test_3000_half_open_connections_from_one_address_leave_runs_working(
    serve: Callable[[str], Served],
) -> None:
    # The case, with the defaults this process's descriptor limit gives
    # (the clients' 3000 descriptors are this process's too).
    if descriptor_limit() < 8000:
        pytest.skip(f"needs RLIMIT_NOFILE >= 8000 (ulimit -n), not {descriptor_limit()}")
    s = serve("")
    limits = s.sup.config.gateway
    assert limits.max_connections_per_client < 3000 <= limits.max_connections
    guard = s.server.connections
    flood: list[socket.socket] = []
    try:
        for _ in range(3000):
            sock = _connect(s.port, "127.0.0.2")
            with contextlib.suppress(OSError):  # a refused one may be closed already
                sock.sendall(PARTIAL_HEAD)
            flood.append(sock)
        cap = limits.max_connections_per_client
        _until(lambda: guard.held("127.0.0.2") == cap, f"{cap} connections held", 60)
        _until(lambda: guard.refused["per_client"] == 3000 - cap, "the rest refused", 60)
        run = s.alpha.post("/v1/runs", json={"commands": ["true"], "wait": 30})
        assert run.status_code == 200 and run.json()["status"] == "completed", run.text
        assert _healthz(s.port).startswith(b"HTTP/1.1 200 ")
    finally:
        _close_all(flood)
    _until(lambda: guard.held("127.0.0.2") == 0, "the flood's connections released", 60)


# -- gateway.header_timeout_s ---------------------------------------------------------------


def test_a_connection_that_does_not_finish_its_head_in_time_is_closed(
    serve: Callable[[str], Served],
) -> None:
    s = serve("header_timeout_s: 1")
    silent = _connect(s.port)
    partial = _connect(s.port, send=PARTIAL_HEAD)
    # A kept-alive connection: one whole request, then half of the next one's head.
    kept = _connect(s.port, send=b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    assert kept.recv(12) == b"HTTP/1.1 200"
    kept.sendall(PARTIAL_HEAD)
    for sock in (silent, partial, kept):
        with sock:
            _until_closed(sock)  # within the socket's 30 s timeout, or the test fails
    assert s.server.connections.head_timeouts >= 3
    _until(lambda: s.server.connections.total == 0, "every connection released")


def test_a_head_past_max_head_bytes_is_answered_431_and_others_are_served(
    serve: Callable[[str], Served],
) -> None:
    # One header streamed without end (no token needed) used to be gathered whole:
    # memory, and the parser joining its pieces, on the event loop.
    s = serve("max_head_bytes: 4096")
    big = _connect(s.port, send=b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: ")
    with big:
        with contextlib.suppress(OSError):  # the server may close before all is sent
            for _ in range(64):
                big.sendall(b"a" * 1024)
                time.sleep(0.005)  # a header streamed, not written at once
        got = _until_closed(big)
    assert got == b"" or got.startswith(b"HTTP/1.1 431 "), got
    _until(lambda: s.server.connections.heads_too_large == 1, "the head answered 431")
    assert _healthz(s.port).startswith(b"HTTP/1.1 200 ")  # a head under the cap is served
    many = b"".join(b"X-H%d: v\r\n" % n for n in range(600))  # many small headers, too
    with _connect(s.port, send=b"GET /healthz HTTP/1.1\r\nHost: t\r\n" + many + b"\r\n") as sock:
        assert _until_closed(sock).startswith(b"HTTP/1.1 431 ")
    _until(lambda: s.server.connections.total == 0, "every connection released")


def test_a_body_that_does_not_arrive_in_time_closes_its_connection(
    serve: Callable[[str], Served],
) -> None:
    # Ten bytes announced, none sent, no token: the connection was held for ever (the
    # token is read after the body); a trickle of one byte now and then too.
    s = serve("body_timeout_s: 1")
    head = b"POST /v1/runs HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n"
    silent = _connect(s.port, send=head)
    trickle = _connect(s.port, send=head + b"{")
    with silent, trickle:
        _until_closed(silent)
        _until_closed(trickle)
    assert s.server.connections.body_timeouts == 2
    assert _healthz(s.port).startswith(b"HTTP/1.1 200 ")  # a whole request in time is served
    _until(lambda: s.server.connections.total == 0, "every connection released")


# -- gateway.max_listeners_per_profile ------------------------------------------------------


def _stream(port: int, token: str, path: str = "/v1/events") -> socket.socket:
    """A raw SSE client that has read the stream's head and ``: connected``."""
    sock = _connect(port)
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
    )
    got = b""
    while b": connected" not in got:
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    assert got.startswith(b"HTTP/1.1 200 "), got
    return sock


def test_event_streams_over_the_profile_cap_answer_429_and_other_profiles_still_stream(
    serve: Callable[[str], Served],
) -> None:
    s = serve("max_listeners_per_profile: 5")
    seats = s.server.gateway.listeners
    streams = [_stream(s.port, TOKENS["alpha"]) for _ in range(5)]
    try:
        refused = s.alpha.get("/v1/events")
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "5"
        assert "gateway.max_listeners_per_profile" in refused.json()["detail"]
        run_id = s.alpha.submit(["true"])
        assert s.alpha.get(f"/v1/runs/{run_id}/events").status_code == 429  # every stream counts
        streams.append(_stream(s.port, TOKENS["beta"]))  # another profile has its own seats
        streams.append(_stream(s.port, ADMIN))
        assert seats.held("profile:alpha") == 5
        streams.pop(0).close()
        _until(lambda: seats.held("profile:alpha") == 4, "a closed stream's seat given back")
        streams.append(_stream(s.port, TOKENS["alpha"]))
    finally:
        _close_all(streams)
    _until(lambda: len(seats) == 0, "every seat given back")


def test_200_listeners_each_get_the_event_and_leave_nothing_behind(
    serve: Callable[[str], Served],
) -> None:
    s = serve(
        "max_connections: 400, max_connections_per_client: 300, max_listeners_per_profile: 250"
    )
    gw = s.server.gateway
    streams = [_stream(s.port, ADMIN) for _ in range(200)]
    try:
        assert len(gw.listeners) == 200 and len(gw.hub) == 200
        assert _healthz(s.port).startswith(b"HTTP/1.1 200 ")
        with httpx.Client(
            base_url=s.base, headers={"Authorization": f"Bearer {TOKENS['alpha']}"}
        ) as c:
            run = c.post("/v1/runs", json={"commands": ["true"], "wait": 20}, timeout=30).json()
        assert run["status"] == "completed"
        want = b"event: run.finished\n"
        got = {sock: b"" for sock in streams}
        waiting = set(streams)
        with selectors.DefaultSelector() as sel:
            for sock in streams:
                sel.register(sock, selectors.EVENT_READ)
            deadline = time.monotonic() + 60
            while waiting and time.monotonic() < deadline:
                for key, _ in sel.select(1.0):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    chunk = sock.recv(65536)
                    assert chunk, "a listener's stream ended"
                    got[sock] += chunk
                    if want in got[sock] and run["run_id"].encode() in got[sock]:
                        waiting.discard(sock)
                        sel.unregister(sock)
        assert not waiting, f"{len(waiting)} of 200 listeners never got run.finished"
    finally:
        _close_all(streams)
    _until(lambda: len(gw.listeners) == 0, "every listener's seat given back")
    _until(lambda: len(gw.hub) == 0, "every subscription gone")
    _until(lambda: s.server.connections.total == 0, "every connection released")


# -- validation at load ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gateway", "key", "says"),
    [
        ("max_connections: 100000000", "gateway.max_connections", "RLIMIT_NOFILE"),
        (
            "max_connections: 100, max_connections_per_client: 200",
            "gateway.max_connections_per_client",
            "more than gateway.max_connections (100)",
        ),
        (
            "max_connections: 100, max_listeners_per_profile: 101",
            "gateway.max_listeners_per_profile",
            "more than gateway.max_connections (100)",
        ),
        ("header_timeout_s: 0", "gateway.header_timeout_s", "must be more than 0"),
    ],
)
def test_bounds_out_of_range_are_refused_at_load_naming_the_key(
    tmp_path: Path, gateway: str, key: str, says: str
) -> None:
    path = tmp_path / "multiplex.yaml"
    path.write_text(f"gateway: {{{gateway}}}\n")
    with pytest.raises(ConfigError) as caught:
        load_supervisor_config(path)
    message = str(caught.value)
    assert str(path) in message and f"{key}: " in message and says in message
    assert "\n" not in message


def test_the_defaults_leave_descriptors_for_runs() -> None:
    limits = GatewayConfig()
    most = descriptor_limit() - RESERVED_DESCRIPTORS
    assert limits.max_connections <= most and limits.header_timeout_s == 10
    assert limits.max_connections_per_client == limits.max_connections // 4
    assert limits.max_listeners_per_profile == limits.max_connections // 4
    assert GatewayConfig(max_connections=40).max_connections_per_client == 10


def test_streams_served_by_another_asgi_server_relay_each_event(tmp_path: Path) -> None:
    # Embedded in a plain uvicorn (docs/gateway.md#embedding): no connection for
    # the hub to write to, so each event goes through ASGI; the seat is still held.
    make_homes(tmp_path)
    (tmp_path / "multiplex.yaml").write_text(
        "profiles_dir: profiles\ndefault_profile: alpha\nwatch: {mode: off}\n"
        "gateway: {max_listeners_per_profile: 1}\n"
    )
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    app = create_app(sup, admin_token=ADMIN)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    gw = app.state.gateway
    try:
        _until(lambda: server.started, "uvicorn started")
        alpha = Api(f"http://127.0.0.1:{port}", TOKENS["alpha"])
        stream = _stream(port, TOKENS["alpha"])
        assert alpha.get("/v1/events").status_code == 429
        run = alpha.post("/v1/runs", json={"commands": ["true"], "wait": 20}).json()
        got = b""
        while b"event: run.finished" not in got:
            chunk = stream.recv(65536)
            assert chunk, got
            got += chunk
        assert run["run_id"].encode() in got
        stream.close()
        _until(lambda: len(gw.listeners) == 0 and len(gw.hub) == 0, "the stream's seat given back")
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
        sup.close()


def test_a_listener_that_stops_reading_is_dropped_once_1_mib_behind(
    serve: Callable[[str], Served],
) -> None:
    s = serve("")
    gw = s.server.gateway
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    sock.settimeout(30)
    sock.connect(("127.0.0.1", s.port))
    sock.sendall(
        f"GET /v1/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ADMIN}\r\n\r\n".encode()
    )
    _until(lambda: len(gw.listeners) == 1, "the stream open")
    # It never reads again; each run sends it about 130 kB (its output twice).
    with httpx.Client(base_url=s.base, headers={"Authorization": f"Bearer {TOKENS['alpha']}"}) as c:
        for _ in range(400):
            body = {"commands": ["printf '%65000s' x"], "wait": 20}
            assert c.post("/v1/runs", json=body, timeout=30).json()["status"] == "completed"
            if len(gw.listeners) == 0:
                break
    assert len(gw.listeners) == 0 and len(gw.hub) == 0, "the reader was never dropped"
    with sock, contextlib.suppress(ConnectionResetError):
        while sock.recv(1 << 20):
            pass  # what was sent before, then the reset


def test_a_reload_applies_the_caps_to_the_next_connection(
    serve: Callable[[str], Served], tmp_path: Path
) -> None:
    s = serve("max_connections_per_client: 50, header_timeout_s: 120")
    config = tmp_path / "multiplex.yaml"
    config.write_text(
        config.read_text().replace(
            "max_connections_per_client: 50", "max_connections_per_client: 3"
        )
    )
    reloaded = s.admin.post("/v1/admin/reload")
    assert reloaded.status_code == 200 and reloaded.json()["restart_required"] == []
    held = [_connect(s.port, "127.0.0.2", PARTIAL_HEAD) for _ in range(3)]
    try:
        _until(lambda: s.server.connections.held("127.0.0.2") == 3, "three connections held")
        with _connect(s.port, "127.0.0.2") as extra:
            assert PER_CLIENT_503 in _until_closed(extra)
    finally:
        _close_all(held)
