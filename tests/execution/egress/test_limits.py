"""Bounds: request head size and time, the concurrent cap, idle tunnels, stop()."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from multiplex.execution.egress import EgressLimits, EgressPolicy, EgressProxy
from tests.execution.egress.conftest import Serve


@pytest.fixture
def echo() -> Iterator[int]:
    """A loopback TCP echo server: what a tunnel carries comes back."""
    server = socket.create_server(("127.0.0.1", 0))
    conns: list[socket.socket] = []

    def run(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # the fixture's teardown closes it
            while data := conn.recv(65536):
                conn.sendall(data)

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conns.append(conn)
            threading.Thread(target=run, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in conns:
        conn.close()


def tunnel(port: int, target: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"CONNECT 127.0.0.1:{target} HTTP/1.1\r\n\r\n".encode())
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return sock


def closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_an_oversized_request_head_is_cut(serve: Serve) -> None:
    served = serve(limits=EgressLimits(head_bytes=1024))
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"GET http://pypi.org/ HTTP/1.1\r\nX-Pad: " + b"a" * 2000 + b"\r\n\r\n")
        reply = sock.makefile("rb").read()
    assert reply.startswith(b"HTTP/1.1 431 ")
    assert served.connects == [] and served.refusals == []


def test_the_default_head_limit_is_16_kib(serve: Serve, echo: int) -> None:
    served = serve(allow=(f"127.0.0.1:{echo}",))
    line = f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n".encode()
    fits = line + b"X: " + b"a" * (16 * 1024 - len(line) - 7) + b"\r\n\r\n"
    assert len(fits) == 16 * 1024
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(fits)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(fits[:-4] + b"b\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 431")


def test_a_slow_request_head_is_cut(serve: Serve) -> None:
    served = serve(limits=EgressLimits(head_timeout=0.5))
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"GET http://pypi.org/ HTTP/1.1\r\n")  # ... and never the rest
        start = time.monotonic()
        reply = sock.makefile("rb").read()
        assert time.monotonic() - start < 5
    assert reply.startswith(b"HTTP/1.1 408 ")


def test_a_slow_socks_handshake_is_cut(serve: Serve) -> None:
    served = serve(limits=EgressLimits(head_timeout=0.5))
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"\x05\x01")  # the method list never comes
        assert closed_within(sock, 5)


def test_connections_over_the_cap_are_closed_at_once(serve: Serve, echo: int) -> None:
    served = serve(allow=(f"127.0.0.1:{echo}",), limits=EgressLimits(max_connections=2))
    held = [tunnel(served.port, echo) for _ in range(2)]
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as extra:
        assert closed_within(extra, 5)
    for sock in held:  # the two within the cap still work
        sock.sendall(b"ping")
        assert sock.recv(4) == b"ping"
    held.pop().close()
    deadline = time.monotonic() + 5
    while served.listener.open_connections > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    again = tunnel(served.port, echo)  # a place was freed
    again.close()
    held[0].close()


def test_an_idle_tunnel_is_closed_and_a_busy_one_is_not(serve: Serve, echo: int) -> None:
    served = serve(allow=(f"127.0.0.1:{echo}",), limits=EgressLimits(idle_timeout=0.6))
    idle, busy = tunnel(served.port, echo), tunnel(served.port, echo)
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        busy.sendall(b"x")
        assert busy.recv(1) == b"x"
        time.sleep(0.1)
    assert closed_within(idle, 0.1)
    busy.sendall(b"still")
    assert busy.recv(5) == b"still"
    busy.close()


def test_stop_closes_open_tunnels_and_the_listening_socket(echo: int) -> None:
    with EgressProxy() as proxy:
        sock = socket.create_server(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        listener = proxy.serve(sock, EgressPolicy(allow=[f"127.0.0.1:{echo}"]), on_refused=print)
        open_tunnel = tunnel(port, echo)
        start = time.monotonic()
        proxy.stop(listener)
        proxy.stop(listener)  # idempotent
        assert time.monotonic() - start < 2
        assert closed_within(open_tunnel, 2)
        open_tunnel.close()
        assert sock.fileno() == -1
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2)


def test_listeners_are_independent_and_served_from_any_thread(echo: int) -> None:
    with EgressProxy() as proxy:
        results: list[bytes] = []

        def one(allow: list[str]) -> None:
            sock = socket.create_server(("127.0.0.1", 0))
            refusals: list[object] = []
            proxy.serve(sock, EgressPolicy(allow=allow), on_refused=refusals.append, tag=allow)
            with socket.create_connection(sock.getsockname(), timeout=10) as client:
                client.sendall(f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode())
                results.append(client.recv(12))

        threads = [
            threading.Thread(target=one, args=(allow,))
            for allow in ([f"127.0.0.1:{echo}"], ["pypi.org"], [f"127.0.0.1:{echo}"], [])
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert sorted(results) == [b"HTTP/1.1 200"] * 2 + [b"HTTP/1.1 403"] * 2


def test_a_tunnel_carries_data_both_ways_and_half_close(serve: Serve, echo: int) -> None:
    served = serve(allow=(f"127.0.0.1:{echo}",))
    sock = tunnel(served.port, echo)
    payload = bytes(range(256)) * 8192  # 2 MiB, more than any buffer

    def send() -> None:
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)

    sender = threading.Thread(target=send)
    sender.start()
    got = bytearray()
    while data := sock.recv(1 << 20):
        got += data
    sender.join()
    sock.close()
    assert got == payload  # and the echo's EOF came back after ours
