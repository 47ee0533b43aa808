"""The egress proxy against a raw TCP relay and the maintained candidates (docs/execution.md#egress).

Each proxy runs in a process of its own on loopback; this process is the
client. Two figures per proxy, medians of --rounds (3) interleaved rounds:
requests/s of 200 sequential small GETs (absolute-form, one keep-alive client
connection, reconnecting whenever a proxy closes it) and MB/s of one 200 MB
CONNECT tunnel (the origin sends, the client reads to EOF). The floor is a
raw relay: a thread per direction, ``recv_into`` a 256 KiB buffer and
``sendall``, to a fixed target, parsing nothing (it passes the CONNECT line
on, and the origin answers it as a proxy would).

The candidates, ``pproxy`` and ``proxy.py``, were rejected (the doc says why);
they are measured when importable by ``--candidates-python`` (default: this
interpreter), e.g. a throwaway venv::

    python3 -m venv /tmp/egress-bench-venv
    /tmp/egress-bench-venv/bin/pip install pproxy==2.7.9 proxy.py==2.4.10
    .venv/bin/python bench/egress_proxy.py --candidates-python /tmp/egress-bench-venv/bin/python

and skipped with a note otherwise. Ours and the raw relay are always measured.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GETS = 200
TUNNEL_BYTES = 200 * 1024 * 1024
SMALL = b"x" * 512

ORIGIN = textwrap.dedent(
    """
    import asyncio, sys
    SMALL = b"x" * 512
    RESPONSE = b"HTTP/1.1 200 OK\\r\\nContent-Length: 512\\r\\nContent-Type: text/plain\\r\\n\\r\\n" + SMALL
    BLOCK = memoryview(bytes(1 << 20))

    async def client(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\\r\\n\\r\\n")
                if head.startswith(b"CONNECT"):  # only the raw relay passes this on
                    writer.write(b"HTTP/1.1 200 Connection Established\\r\\n\\r\\n")
                elif head.startswith(b"GO"):
                    left = int(head.split()[1])
                    while left:
                        n = min(left, len(BLOCK))
                        writer.write(BLOCK[:n])
                        left -= n
                        await writer.drain()
                    break
                else:
                    writer.write(RESPONSE)
                    if b"close" in head.lower():
                        break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(client, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())
    """
)

RELAY = textwrap.dedent(
    """
    import socket, sys, threading
    target = ("127.0.0.1", int(sys.argv[1]))
    def pipe(src, dst):
        buf = bytearray(256 * 1024); view = memoryview(buf)
        try:
            while n := src.recv_into(buf):
                dst.sendall(view[:n])
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    server = socket.create_server(("127.0.0.1", 0))
    print(server.getsockname()[1], flush=True)
    while True:
        client, _ = server.accept()
        upstream = socket.create_connection(target)
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
    """
)

# name: (module to import, arguments after the interpreter)
CANDIDATES = {
    "pproxy": ("pproxy", "-m pproxy -l http+socks5://127.0.0.1:{port}"),
    "proxy.py": (
        "proxy",
        "-m proxy --hostname 127.0.0.1 --port {port} --num-workers 1 --num-acceptors 1"
        " --log-level ERROR",
    ),
}

OURS = textwrap.dedent(
    """
    import socket, sys, threading
    from multiplex.execution.egress import EgressPolicy, EgressProxy
    sock = socket.create_server(("127.0.0.1", 0))
    proxy = EgressProxy()
    proxy.serve(sock, EgressPolicy(allow=[f"127.0.0.1:{sys.argv[1]}"]), on_refused=print)
    print(sock.getsockname()[1], flush=True)
    threading.Event().wait()
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(argv: list[str], port: int | None = None) -> tuple[subprocess.Popen[str], int]:
    """Start a server process; its port is the first line it prints, or ``port``."""
    # A session of its own: proxy.py forks workers that outlive a killed parent.
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    if port is None:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                _end(proc)
                raise RuntimeError(f"{argv[:4]} did not start listening") from None
            time.sleep(0.05)


def _end(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` and every process of its session (its pid is the group's id)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _recv_head(sock: socket.socket, pending: bytearray) -> bytes:
    while (end := pending.find(b"\r\n\r\n")) < 0:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed before a head")
        pending += data
    head = bytes(pending[: end + 4])
    del pending[: end + 4]
    return head


def gets_per_second(proxy_port: int, origin_port: int) -> float:
    request = (
        f"GET http://127.0.0.1:{origin_port}/small HTTP/1.1\r\nHost: 127.0.0.1:{origin_port}\r\n\r\n"
    ).encode()
    sock: socket.socket | None = None
    pending = bytearray()
    start = time.perf_counter()
    for _ in range(GETS):
        if sock is None:
            sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=30)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            pending.clear()
        sock.sendall(request)
        head = _recv_head(sock, pending).lower()
        length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
        while len(pending) < length:
            pending += sock.recv(65536)
        assert bytes(pending[:length]) == SMALL
        del pending[:length]
        if b"connection: close" in head:
            sock.close()
            sock = None
    elapsed = time.perf_counter() - start
    if sock is not None:
        sock.close()
    return GETS / elapsed


def tunnel_mb_per_second(proxy_port: int, origin_port: int) -> float:
    buf = bytearray(1 << 20)
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=30) as sock:
        start = time.perf_counter()
        sock.sendall(f"CONNECT 127.0.0.1:{origin_port} HTTP/1.1\r\n\r\n".encode())
        pending = bytearray()
        assert b" 200 " in _recv_head(sock, pending)
        sock.sendall(f"GO {TUNNEL_BYTES}\r\n\r\n".encode())
        got = len(pending)
        while n := sock.recv_into(buf):
            got += n
        elapsed = time.perf_counter() - start
    assert got == TUNNEL_BYTES, got
    return TUNNEL_BYTES / elapsed / 1e6


def _has(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--candidates-python", default=sys.executable)
    args = parser.parse_args()
    py, cand = sys.executable, args.candidates_python
    origin, origin_port = _start([py, "-c", ORIGIN])
    starters: dict[str, Callable[[], tuple[subprocess.Popen[str], int]]] = {
        "raw relay": lambda: _start([py, "-c", RELAY, str(origin_port)]),
        "multiplex": lambda: _start([py, "-c", OURS, str(origin_port)]),
    }
    for name, (module, template) in CANDIDATES.items():
        if _has(cand, module):
            port = _free_port()
            starters[name] = functools.partial(
                _start, [cand, *template.format(port=port).split()], port
            )
        else:
            print(f"note: {name} not importable by {cand}: skipped (see --candidates-python)")
    procs = {name: start() for name, start in starters.items()}
    rps: dict[str, list[float]] = {name: [] for name in procs}
    mbps: dict[str, list[float]] = {name: [] for name in procs}
    try:
        for _, port in procs.values():  # warm up each once
            gets_per_second(port, origin_port)
        for _ in range(args.rounds):
            for name, (_, port) in procs.items():
                rps[name].append(gets_per_second(port, origin_port))
                mbps[name].append(tunnel_mb_per_second(port, origin_port))
    finally:
        for proc, _ in [*procs.values(), (origin, 0)]:
            _end(proc)
    floor_rps = statistics.median(rps["raw relay"])
    floor_mbps = statistics.median(mbps["raw relay"])
    print(
        f"medians of {args.rounds} rounds; {GETS} sequential GETs, one {TUNNEL_BYTES >> 20} MB tunnel"
    )
    for name in procs:
        r, m = statistics.median(rps[name]), statistics.median(mbps[name])
        print(
            f"{name:10s} {r:8.0f} GET/s ({r / floor_rps:4.2f}x relay)"
            f"  {m:8.0f} MB/s ({m / floor_mbps:4.2f}x relay)"
            f"  [GET/s {min(rps[name]):.0f}-{max(rps[name]):.0f}, MB/s {min(mbps[name]):.0f}-{max(mbps[name]):.0f}]"
        )
    ours = statistics.median(mbps["multiplex"]) / floor_mbps
    print(f"tunnel throughput of ours vs the raw relay: {ours:.2f}x (target >= 0.50x)")


if __name__ == "__main__":
    main()
