"""A listener serving one command after another (docs/execution.md#egress): each connection keeps
the lease it was accepted under; nothing of an ended command is served under the next one's."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from multiplex.execution.egress import EgressListener, EgressPolicy, EgressProxy, Refusal
from tests.execution.egress.test_limits import closed_within, echo, tunnel

__all__ = ["echo"]  # the fixture, used by name

REFUSED = "CONNECT x.example:443 HTTP/1.1\r\n\r\n"


@pytest.fixture
def proxy() -> Iterator[EgressProxy]:
    with EgressProxy() as proxy:
        yield proxy


# x.example is not in it: refused without a name lookup.
ONLY_PYPI = ("pypi.org",)


def _served(
    proxy: EgressProxy, refusals: list[Refusal], allow: tuple[str, ...] = ONLY_PYPI
) -> tuple[EgressListener, int]:
    sock = socket.create_server(("127.0.0.1", 0))
    listener = proxy.serve(sock, EgressPolicy(allow), on_refused=refusals.append, tag="first")
    return listener, int(sock.getsockname()[1])


def _ask(port: int, request: str = REFUSED) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(request.encode())
        client.settimeout(10)
        try:
            return client.recv(4096)
        except ConnectionResetError:
            return b""


def _returned(proxy: EgressProxy, listener: EgressListener, answer: bool = True) -> None:
    """Release ``listener`` and wait until it is offered back (as the hub leases only then)."""
    offered = threading.Event()

    def keep(done: EgressListener) -> bool:
        assert done is listener
        offered.set()
        return answer

    proxy.release(listener, keep)
    assert offered.wait(5), "the released listener was never offered back"


def test_a_released_listener_serves_the_next_lease_and_refusals_reach_only_it(
    proxy: EgressProxy,
) -> None:
    first: list[Refusal] = []
    listener, port = _served(proxy, first)
    assert _ask(port).startswith(b"HTTP/1.1 403")
    assert [r.tag for r in first] == ["first"]
    _returned(proxy, listener)
    second: list[Refusal] = []
    proxy.lease(listener, EgressPolicy(ONLY_PYPI), on_refused=second.append, tag="second")
    assert _ask(port).startswith(b"HTTP/1.1 403")
    assert [r.tag for r in second] == ["second"]
    assert [r.tag for r in first] == ["first"], "the ended command was told of the next one's"


def test_a_new_lease_brings_its_own_policy(proxy: EgressProxy, echo: int) -> None:
    first: list[Refusal] = []
    listener, port = _served(proxy, first, allow=(f"127.0.0.1:{echo}",))
    tunnel(port, echo).close()
    _returned(proxy, listener)
    second: list[Refusal] = []
    proxy.lease(listener, EgressPolicy(ONLY_PYPI), on_refused=second.append, tag="second")
    assert _ask(port, f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
    assert [r.tag for r in second] == ["second"] and first == []


def test_between_leases_a_connection_is_closed_unread(proxy: EgressProxy) -> None:
    first: list[Refusal] = []
    listener, port = _served(proxy, first)
    _returned(proxy, listener)
    assert _ask(port) == b""
    assert first == []


def test_a_connection_queued_when_the_lease_ends_is_never_served_under_the_next(
    proxy: EgressProxy,
) -> None:
    first: list[Refusal] = []
    listener, port = _served(proxy, first)
    # Hold the proxy's loop so the next connection waits in the listen queue, unaccepted.
    loop = proxy._running_loop()
    held, release_loop = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release_loop.wait(10)

    loop.call_soon_threadsafe(hold)
    assert held.wait(10)
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(REFUSED.encode())
    time.sleep(0.1)  # the handshake is done by the kernel: the connection is queued
    _returned(proxy, listener)
    second: list[Refusal] = []
    proxy.lease(listener, EgressPolicy(ONLY_PYPI), on_refused=second.append, tag="second")
    release_loop.set()
    assert closed_within(client, 5)
    client.close()
    assert first == [] and second == [], "a queued connection was served after its lease ended"


def test_connections_left_open_are_closed_before_the_listener_is_offered(
    proxy: EgressProxy, echo: int
) -> None:
    first: list[Refusal] = []
    listener, port = _served(proxy, first, allow=(f"127.0.0.1:{echo}",))
    open_tunnel = tunnel(port, echo)
    seen: list[int] = []
    offered = threading.Event()

    def keep(done: EgressListener) -> bool:
        seen.append(done.open_connections)
        offered.set()
        return True

    proxy.release(listener, keep)
    assert closed_within(open_tunnel, 5)
    open_tunnel.close()
    assert offered.wait(5)
    assert seen == [0]


def test_a_listener_not_kept_is_stopped(proxy: EgressProxy) -> None:
    listener, port = _served(proxy, [])
    _returned(proxy, listener, answer=False)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
    assert listener.tag is None
