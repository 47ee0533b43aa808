"""SOCKS5 through the proxy: real curl (socks5h and socks5), raw handshakes for the edges."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import subprocess

import pytest

from tests.execution.egress.conftest import Origin, Serve, Served


def curl(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return subprocess.run(
        ["curl", "-sS", "--max-time", "20", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )


def socks_request(served: Served, atyp: int, address: bytes, port: int, command: int = 1) -> int:
    """The reply code the proxy gives a raw SOCKS5 request."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"\x05\x01\x00")
        assert sock.recv(2) == b"\x05\x00"
        sock.sendall(bytes((5, command, 0, atyp)) + address + struct.pack("!H", port))
        reply = sock.recv(10)
    return reply[1]


def domain(name: str) -> bytes:
    return bytes((len(name),)) + name.encode()


@pytest.mark.parametrize("flag", ["--socks5-hostname", "--socks5"])
def test_curl_reaches_an_allowed_origin(serve: Serve, origin: Origin, flag: str) -> None:
    served = serve(allow=(f"localhost:{origin.port}", f"127.0.0.1:{origin.port}"))
    out = curl(flag, f"127.0.0.1:{served.port}", f"http://localhost:{origin.port}/hello.txt")
    assert out.stdout == "hello through the proxy\n", out.stderr
    assert served.connects == [("127.0.0.1", origin.port)]


def test_curl_socks5h_to_loopback_is_refused_with_ruleset_code(
    serve: Serve, origin: Origin
) -> None:
    served = serve()
    out = curl("--socks5-hostname", f"127.0.0.1:{served.port}", f"http://localhost:{origin.port}/")
    assert out.returncode == 97 and "(2)" in out.stderr  # 0x02: not allowed by ruleset
    assert [r.message for r in served.refusals] == [
        f"refused localhost:{origin.port} (resolves to loopback address 127.0.0.1)"
    ]
    assert served.connects == []


@pytest.mark.parametrize(
    ("atyp", "address", "shown"),
    [
        (1, socket.inet_aton("127.0.0.1"), "loopback address 127.0.0.1"),
        (4, ipaddress.IPv6Address("::1").packed, "loopback address ::1"),
        (4, ipaddress.IPv6Address("::ffff:127.0.0.1").packed, "loopback address ::ffff:7f00:1"),
        (1, socket.inet_aton("169.254.169.254"), "link-local address 169.254.169.254"),
        (1, socket.inet_aton("10.0.0.1"), "private address 10.0.0.1"),
        (1, socket.inet_aton("100.64.1.1"), "shared (CGNAT) address 100.64.1.1"),
        (4, ipaddress.IPv6Address("fe80::1").packed, "link-local address fe80::1"),
        (3, domain("localhost"), "loopback address 127.0.0.1"),
    ],
)
def test_raw_requests_to_non_public_addresses_are_refused(
    serve: Serve, origin: Origin, atyp: int, address: bytes, shown: str
) -> None:
    served = serve()
    assert socks_request(served, atyp, address, origin.port) == 0x02
    assert served.connects == []
    assert len(served.refusals) == 1 and shown in served.refusals[0].message


def test_an_ip_literal_named_in_allow_connects(serve: Serve, origin: Origin) -> None:
    served = serve(allow=(f"127.0.0.1:{origin.port}",))
    assert socks_request(served, 1, socket.inet_aton("127.0.0.1"), origin.port) == 0x00
    assert served.connects == [("127.0.0.1", origin.port)]


def test_a_closed_port_answers_connection_refused(serve: Serve) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]  # bound, never listening: connect is refused
        served = serve(allow=(f"127.0.0.1:{closed}",))
        assert socks_request(served, 1, socket.inet_aton("127.0.0.1"), closed) == 0x05


def test_an_unresolvable_name_answers_host_unreachable(serve: Serve) -> None:
    served = serve()
    assert socks_request(served, 3, domain("no-such-host.invalid"), 80) == 0x04
    assert served.connects == []


@pytest.mark.parametrize("command", [2, 3])  # BIND, UDP ASSOCIATE
def test_bind_and_udp_are_not_supported(serve: Serve, origin: Origin, command: int) -> None:
    served = serve(allow=(f"127.0.0.1:{origin.port}",))
    code = socks_request(served, 1, socket.inet_aton("127.0.0.1"), origin.port, command)
    assert code == 0x07
    assert served.connects == []


def test_only_the_no_auth_method_is_offered(serve: Serve) -> None:
    served = serve()
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"\x05\x01\x02")  # username/password only
        assert sock.recv(2) == b"\x05\xff"
