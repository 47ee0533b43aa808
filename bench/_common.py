"""Helpers shared by the benchmarks: timing, percentiles, temporary homes."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Realistic agent command lines (one a line; "#" comments; "<NL>" for a newline).
ORDINARY_CORPUS = REPO / "tests/shell/corpus/ordinary.txt"


def median_us(fn: Callable[[], object], *, loops: int, repeats: int = 7) -> float:
    """Median over ``repeats`` batches of the per-call time of ``fn`` in microseconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - start) / loops * 1e6)
    return statistics.median(samples)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def write_home(root: Path, name: str, config: str, env: str = "") -> Path:
    home = root / name
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(config)
    if env:
        (home / ".env").write_text(env)
    return home


class RawHttp:
    """A minimal HTTP/1.1 keep-alive client: one socket, pre-encoded requests.

    The benches measure the server; a full client library would spend more CPU
    per request than the server does, on the same two cores.
    """

    def __init__(self, base: str, token: str) -> None:
        import socket
        from urllib.parse import urlsplit

        parts = urlsplit(base)
        self._sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._file = self._sock.makefile("rb")
        self._auth = f"Authorization: Bearer {token}\r\n".encode()

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
        ).encode()
        self._sock.sendall(head + self._auth + b"\r\n" + body)
        status = int(self._file.readline().split()[1])
        length = 0
        while (line := self._file.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return status, self._file.read(length)

    def close(self) -> None:
        self._file.close()
        self._sock.close()
