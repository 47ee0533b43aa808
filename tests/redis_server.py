"""A real Debian ``redis-server`` on a free loopback port, for the cluster tests (never a fake).

One server per test session (per xdist worker); ``stop``/``start`` bring the
same server down and back on the same port for the Redis-loss tests, and
``flush`` empties it between tests. It requires a password, as a cluster's
Redis must (docs/cluster.md#authentication), and every start applies the ACL
user that docs/cluster.md documents: :attr:`RedisServer.url` connects as that
user, so every cluster test checks the documented line; :meth:`client` is the
``default`` user (the admin: flush, kill clients, read what the nodes wrote).
"""

from __future__ import annotations

import secrets
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

__all__ = ["RedisServer", "documented_acl", "free_port"]

_DOC = Path(__file__).resolve().parents[1] / "docs" / "cluster.md"
ACL_USER = "multiplex"


def documented_acl(password: str) -> list[str]:
    """The one ``ACL SETUSER`` line of docs/cluster.md, as words, with ``password`` in it."""
    lines = [line for line in _DOC.read_text().splitlines() if line.startswith("ACL SETUSER ")]
    assert len(lines) == 1, "docs/cluster.md shows one ACL SETUSER line"
    words = [f">{password}" if w == ">CHANGE-ME" else w for w in shlex.split(lines[0])]
    assert f">{password}" in words and words[2] == ACL_USER, words
    return words


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server process: no persistence, loopback only."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server")
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.password = secrets.token_hex(16)  # the default user's (requirepass)
        self.acl_password = secrets.token_hex(16)  # the documented ACL user's
        self.extra_args: list[str] = []  # more redis-server options, for a test's own server
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where a node connects: as the ACL user of docs/cluster.md."""
        return f"redis://{ACL_USER}:{self.acl_password}@127.0.0.1:{self.port}/0"

    @property
    def admin_url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(
            port=self.port, password=self.password, decode_responses=True, socket_timeout=5
        )

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(self.workdir),
                "--requirepass",
                self.password,
                *self.extra_args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    acl = documented_acl(self.acl_password)
                    self.client().execute_command(*acl)  # type: ignore[no-untyped-call]
                    return self
            except redis.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def flush(self) -> None:
        self.client().flushall()
