"""Shared helpers for the execution tests: finding what a run left behind."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def processes_with(marker: str) -> list[int]:
    """Every live process whose environment holds ``marker`` (sandboxed ones too: /proc is the host's)."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ and state != b"Z":
            found.append(int(entry))
    return found


def left_behind(marker: str, settle: float = 5.0) -> list[int]:
    """The processes carrying ``marker`` that are still alive once they had ``settle`` seconds to go."""
    deadline = time.monotonic() + settle
    while (found := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


@pytest.fixture
def loopback_listener() -> Iterator[tuple[socket.socket, int]]:
    """A TCP socket listening on 127.0.0.1 (an ephemeral port), closed afterwards."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    try:
        yield server, server.getsockname()[1]
    finally:
        server.close()
