"""Real sockets on loopback: an origin HTTP server, a PEP 503 index with a real wheel, the proxy.

Nothing here sends a packet off loopback: a refused private or public address
is refused before any connection (``on_connect`` records every attempt).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import socket
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from multiplex.execution.egress import (
    EgressLimits,
    EgressListener,
    EgressPolicy,
    EgressProxy,
    Refusal,
)

PACKAGE = "mx-egress-probe"
WHEEL = "mx_egress_probe-0.1-py3-none-any.whl"
BIG = 3 * 1024 * 1024 + 17  # a body larger than any buffer, an odd size


def _build_wheel(path: Path) -> None:
    dist = "mx_egress_probe-0.1.dist-info"
    files = {
        "mx_egress_probe/__init__.py": "VALUE = 1\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{dist}/RECORD", record)


class _Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and Content-Length, as real indexes

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        # Echo the body's length and digest: proves a streamed request body arrived whole.
        if "chunked" in self.headers.get("Transfer-Encoding", ""):
            data = bytearray()
            while (size := int(self.rfile.readline().split(b";")[0], 16)) != 0:
                data += self.rfile.read(size)
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b""):
                pass
        else:
            data = bytearray(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        body = f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/headers":
            body = "".join(f"{k}: {v}\n" for k, v in self.headers.items()).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


@dataclass
class Origin:
    port: int
    root: Path
    big_digest: str


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Origin]:
    root = tmp_path_factory.mktemp("origin")
    (root / "hello.txt").write_text("hello through the proxy\n")
    big = bytes(range(256)) * (BIG // 256) + b"x" * (BIG % 256)
    (root / "big.bin").write_bytes(big)
    simple = root / "simple" / PACKAGE
    simple.mkdir(parents=True)
    _build_wheel(root / WHEEL)
    digest = hashlib.sha256((root / WHEEL).read_bytes()).hexdigest()
    (root / "simple" / "index.html").write_text(f'<a href="{PACKAGE}/">{PACKAGE}</a>\n')
    (simple / "index.html").write_text(f'<a href="../../{WHEEL}#sha256={digest}">{WHEEL}</a>\n')
    handler = functools.partial(_Handler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Origin(server.server_address[1], root, hashlib.sha256(big).hexdigest())
    server.shutdown()
    server.server_close()


@dataclass
class Served:
    """One listener and what its callbacks saw."""

    listener: EgressListener
    port: int
    refusals: list[Refusal] = field(default_factory=list)
    connects: list[tuple[str, int]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class Serve:
    def __init__(self, proxy: EgressProxy) -> None:
        self.proxy = proxy
        self.served: list[Served] = []

    def __call__(
        self,
        allow: tuple[str, ...] = (),
        deny: tuple[str, ...] = (),
        protected: tuple[tuple[str, int], ...] = (),
        limits: EgressLimits | None = None,
    ) -> Served:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        served = Served.__new__(Served)
        served.refusals, served.connects, served.port = [], [], port
        served.listener = self.proxy.serve(
            sock,
            EgressPolicy(allow, deny, protected),
            on_refused=served.refusals.append,
            on_connect=lambda address, p: served.connects.append((address, p)),
            tag="test-profile",
            limits=limits,
        )
        self.served.append(served)
        return served


@pytest.fixture(scope="module")
def proxy() -> Iterator[EgressProxy]:
    with EgressProxy() as proxy:
        yield proxy


@pytest.fixture
def serve(proxy: EgressProxy) -> Iterator[Serve]:
    factory = Serve(proxy)
    yield factory
    for served in factory.served:
        proxy.stop(served.listener)
