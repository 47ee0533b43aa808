"""HTTP/1.1 through the proxy with real curl and real pip: forwarding, CONNECT, refusals."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex.execution.egress import EgressPolicy, EgressProxy, RefusalReason
from tests.execution.egress.conftest import PACKAGE, WHEEL, Origin, Serve, Served


def curl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["curl", "-sS", "--max-time", "20", "--noproxy", "", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
    )


def allowed(serve: Serve, origin: Origin) -> Served:
    return serve(allow=(f"127.0.0.1:{origin.port}", f"localhost:{origin.port}"))


def test_forward_get_reaches_an_allowed_origin(serve: Serve, origin: Origin) -> None:
    served = allowed(serve, origin)
    out = curl("-x", served.url, f"http://127.0.0.1:{origin.port}/hello.txt")
    assert out.stdout == "hello through the proxy\n", out.stderr
    assert served.connects == [("127.0.0.1", origin.port)]
    assert served.refusals == []


def test_forward_drops_proxy_headers_and_rewrites_to_origin_form(
    serve: Serve, origin: Origin
) -> None:
    served = allowed(serve, origin)
    out = curl(
        "-x", served.url, "-H", "Proxy-Authorization: Basic c2VjcmV0", "-H", "X-Kept: yes",
        f"http://localhost:{origin.port}/headers",
    )  # fmt: skip
    headers = out.stdout.lower()
    assert "x-kept: yes" in headers
    assert "proxy-" not in headers
    assert f"host: localhost:{origin.port}" in headers


def test_keep_alive_serves_several_requests_on_one_client_connection(
    serve: Serve, origin: Origin
) -> None:
    served = allowed(serve, origin)
    url = f"http://127.0.0.1:{origin.port}/hello.txt"
    other = f"http://localhost:{origin.port}/hello.txt"
    out = curl("-v", "-x", served.url, url, url, other, url)
    assert out.stdout == "hello through the proxy\n" * 4
    assert out.stderr.count("Re-using existing connection") == 3, out.stderr
    # The origin connection is kept for the same host and port, made anew for another.
    assert len(served.connects) == 3


def test_large_download_and_streamed_request_bodies_arrive_whole(
    serve: Serve, origin: Origin, tmp_path: Path
) -> None:
    served = allowed(serve, origin)
    base = f"http://127.0.0.1:{origin.port}"
    out = subprocess.run(
        ["curl", "-sS", "--noproxy", "", "-x", served.url, f"{base}/big.bin"],
        capture_output=True,
        timeout=30,
    )
    assert hashlib.sha256(out.stdout).hexdigest() == origin.big_digest
    upload = tmp_path / "up.bin"
    upload.write_bytes(os.urandom(2 * 1024 * 1024 + 3))
    want = f"{upload.stat().st_size} {hashlib.sha256(upload.read_bytes()).hexdigest()}\n"
    sized = curl("-x", served.url, "--data-binary", f"@{upload}", f"{base}/echo")
    assert sized.stdout == want, sized.stderr
    chunked = curl(
        "-x", served.url, "-H", "Transfer-Encoding: chunked", "--data-binary", f"@{upload}",
        f"{base}/echo",
    )  # fmt: skip
    assert chunked.stdout == want, chunked.stderr


def test_expect_100_continue_is_answered_at_once(
    serve: Serve, origin: Origin, tmp_path: Path
) -> None:
    served = allowed(serve, origin)
    upload = tmp_path / "up.bin"
    upload.write_bytes(b"z" * 100_000)
    out = curl(
        "-v", "-x", served.url, "-H", "Expect: 100-continue", "--data-binary", f"@{upload}",
        f"http://127.0.0.1:{origin.port}/echo",
    )  # fmt: skip
    assert out.stdout.startswith("100000 ")
    assert "< HTTP/1.1 100 Continue" in out.stderr
    assert "Done waiting for 100-continue" not in out.stderr  # curl gave up waiting: the bug


def test_head_and_bodiless_responses_keep_the_connection(serve: Serve, origin: Origin) -> None:
    served = allowed(serve, origin)
    url = f"http://127.0.0.1:{origin.port}/hello.txt"
    head = curl("-v", "-I", "-x", served.url, url, "--next", "-x", served.url, url)
    assert "Content-Length: 24" in head.stdout
    assert head.stdout.endswith("hello through the proxy\n")
    assert head.stderr.count("Re-using existing connection") == 1, head.stderr


@pytest.fixture
def closing_origin() -> Iterator[int]:
    """An origin that closes after each response without saying so (as idle servers do)."""
    server = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(4096)):
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")

    threading.Thread(target=run, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def test_a_kept_origin_connection_that_was_closed_is_made_again(
    serve: Serve, closing_origin: int
) -> None:
    served = serve(allow=(f"127.0.0.1:{closing_origin}",))
    url = f"http://127.0.0.1:{closing_origin}/"
    out = curl("-x", served.url, url, url, url)
    assert out.stdout == "ok\n" * 3, out.stderr
    assert len(served.connects) == 3


def test_connect_tunnel_reaches_an_allowed_origin(serve: Serve, origin: Origin) -> None:
    served = allowed(serve, origin)
    out = curl("-p", "-x", served.url, f"http://localhost:{origin.port}/hello.txt")
    assert out.stdout == "hello through the proxy\n", out.stderr
    assert served.connects == [("127.0.0.1", origin.port)]


def _pip_download(proxy_url: str, origin: Origin, dest: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("PIP_") and "proxy" not in k.lower()
    }
    env |= {"PIP_NO_INPUT": "1", "PIP_CONFIG_FILE": os.devnull}  # no site index or wheel dirs
    return subprocess.run(
        [
            sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
            "--disable-pip-version-check", "--retries", "0", "--timeout", "10",
            "--index-url", f"http://127.0.0.1:{origin.port}/simple",
            "--proxy", proxy_url, "--dest", str(dest), PACKAGE,
        ],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_pip_download_through_the_proxy(serve: Serve, origin: Origin, tmp_path: Path) -> None:
    served = allowed(serve, origin)
    out = _pip_download(served.url, origin, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / WHEEL).read_bytes() == (origin.root / WHEEL).read_bytes()
    assert served.refusals == []


def test_pip_download_of_a_loopback_index_is_refused_without_allow(
    serve: Serve, origin: Origin, tmp_path: Path
) -> None:
    served = serve()
    out = _pip_download(served.url, origin, tmp_path)
    assert out.returncode != 0
    assert not any(tmp_path.iterdir())
    assert served.connects == []
    assert served.refusals and all(
        r.reason is RefusalReason.PRIVATE_ADDRESS for r in served.refusals
    )


# --- hostile: nothing below may connect anywhere -------------------------------------


def assert_refused(served: Served, out: subprocess.CompletedProcess[str], message: str) -> None:
    assert served.connects == [], "the proxy connected before refusing"
    assert [r.message for r in served.refusals] == [message]
    assert served.refusals[0].tag == "test-profile"
    if out.stdout:  # forward: the 403 body; CONNECT: curl shows only the status
        assert out.stdout == f"multiplex egress: {message}\n"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("127.0.0.1:{port}", "refused 127.0.0.1:{port} (resolves to loopback address 127.0.0.1)"),
        ("localhost:{port}", "refused localhost:{port} (resolves to loopback address 127.0.0.1)"),
        ("[::1]:{port}", "refused [::1]:{port} (resolves to loopback address ::1)"),
        (
            "169.254.169.254:80",
            "refused 169.254.169.254:80 (resolves to link-local address 169.254.169.254)",
        ),
        ("10.1.2.3:5432", "refused 10.1.2.3:5432 (resolves to private address 10.1.2.3)"),
        ("100.64.0.9:80", "refused 100.64.0.9:80 (resolves to shared (CGNAT) address 100.64.0.9)"),
        (
            "[::ffff:127.0.0.1]:{port}",
            "refused [::ffff:7f00:1]:{port} (resolves to loopback address ::ffff:7f00:1)",
        ),
    ],
)
@pytest.mark.parametrize("mode", ["forward", "connect"])
def test_non_public_destinations_are_refused_before_connecting(
    serve: Serve, origin: Origin, target: str, message: str, mode: str
) -> None:
    served = serve()  # no allow: the hostile case of a command reaching the gateway or Redis
    target, message = target.format(port=origin.port), message.format(port=origin.port)
    tunnel = ["-p"] if mode == "connect" else []
    out = curl(*tunnel, "-x", served.url, f"http://{target}/hello.txt")
    assert_refused(served, out, message)
    if mode == "connect":
        assert "403" in out.stderr


def test_not_in_allow_is_refused_with_a_403_line(serve: Serve, origin: Origin) -> None:
    served = serve(allow=("pypi.org",))
    out = curl("-i", "-x", served.url, "http://x.example:8080/")
    assert out.stdout.startswith("HTTP/1.1 403 Forbidden")
    assert out.stdout.endswith(
        "\n\nmultiplex egress: refused x.example:8080 (not in egress.allow)\n"
    )
    assert [r.reason for r in served.refusals] == [RefusalReason.NOT_ALLOWED]
    assert served.connects == []


def test_deny_beats_an_exact_allow(serve: Serve, origin: Origin) -> None:
    served = serve(allow=(f"127.0.0.1:{origin.port}",), deny=("127.0.0.1",))
    out = curl("-x", served.url, f"http://127.0.0.1:{origin.port}/hello.txt")
    assert_refused(served, out, f"refused 127.0.0.1:{origin.port} (in egress.deny)")


def test_a_protected_endpoint_is_refused_unless_allow_names_its_port(
    serve: Serve, origin: Origin
) -> None:
    protected = (("127.0.0.1", origin.port),)
    by_host = serve(allow=("127.0.0.1", "localhost"), protected=protected)
    out = curl("-p", "-x", by_host.url, f"http://localhost:{origin.port}/hello.txt")
    assert_refused(
        by_host,
        out,
        f"refused localhost:{origin.port} (resolves to protected endpoint 127.0.0.1:{origin.port})",
    )
    exact = serve(allow=(f"localhost:{origin.port}",), protected=protected)
    out = curl("-p", "-x", exact.url, f"http://localhost:{origin.port}/hello.txt")
    assert out.stdout == "hello through the proxy\n"


def test_failing_callbacks_do_not_break_the_answer(proxy: EgressProxy, origin: Origin) -> None:
    calls: list[object] = []

    def explode(*args: object) -> None:
        calls.append(args)
        raise RuntimeError("callback bug")

    sock = socket.create_server(("127.0.0.1", 0))
    policy = EgressPolicy(allow=[f"127.0.0.1:{origin.port}"])
    listener = proxy.serve(sock, policy, on_refused=explode, on_connect=explode)
    try:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        refused = curl("-x", url, "http://x.example/")
        assert refused.stdout == "multiplex egress: refused x.example:80 (not in egress.allow)\n"
        passed = curl("-x", url, f"http://127.0.0.1:{origin.port}/hello.txt")
        assert passed.stdout == "hello through the proxy\n"
        assert len(calls) == 2  # one refusal, one connect: both raised, both logged
    finally:
        proxy.stop(listener)


@pytest.mark.parametrize(
    "head",
    [
        b"GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",
        b"GET /relative HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST http://pypi.org/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET http://pypi.org/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
        b"CONNECT pypi.org HTTP/1.1\r\n\r\n",
        b"CONNECT user@pypi.org:443 HTTP/1.1\r\n\r\n",
    ],
)
def test_malformed_requests_get_400_and_no_connection(serve: Serve, head: bytes) -> None:
    served = serve()
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(head)
        reply = sock.makefile("rb").read()
    assert reply.startswith(b"HTTP/1.1 400 Bad Request"), reply
    assert served.connects == []


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f.1", "LOCALHOST.", "[::ffff:7f00:1]"])
def test_other_spellings_of_loopback_are_refused(serve: Serve, origin: Origin, host: str) -> None:
    served = serve()  # curl would canonicalize these; a hostile client need not
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(f"CONNECT {host}:{origin.port} HTTP/1.1\r\n\r\n".encode())
        reply = sock.makefile("rb").read()
    assert reply.startswith(b"HTTP/1.1 403 Forbidden"), reply
    assert b"loopback address" in reply
    assert served.connects == []
