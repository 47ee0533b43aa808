"""Shared execution fixtures: real kernels per module (an ipykernel costs about a second); what a run left behind."""

from __future__ import annotations

import os
import socket
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution.kernels._proctree import alive
from tests.conftest import write_home

A_TOKEN = "token-a-0123456789"
A_CRED = "cred-a-abcdef123456"
B_SECRET = "bsecret-value-424242"


def build_homes(root: Path) -> Path:
    profiles = root / "profiles"
    write_home(
        profiles,
        "a",
        "terminal:\n  cwd: work\n  env: {GREETING: hello-a}\n  env_passthrough: [API_TOKEN]\n"
        "  credential_files: [credentials/token.txt]\n",
        env=f"API_TOKEN={A_TOKEN}\nNOT_PASSED=zzz-hidden\n",
        files={"work/data.csv": "n\n1\n2\n3\n", "credentials/token.txt": A_CRED + "\n"},
    )
    write_home(
        profiles,
        "b",
        "terminal:\n  cwd: /tmp\n",
        env=f"B_SECRET={B_SECRET}\n",
        files={"secret-b.txt": "b-only"},
    )
    write_home(
        profiles,
        "c",
        "code_execution:\n  max_session_kernels: 2\n  max_tool_calls: 2\n",
    )
    write_home(profiles, "dock", "terminal:\n  backend: docker\n")
    config = root / "multiplex.yaml"
    config.write_text(textwrap.dedent("profiles_dir: profiles\ndefault_profile: a\n"))
    return config


@pytest.fixture(scope="module")
def sup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
    root = tmp_path_factory.mktemp("kernels")
    supervisor = Supervisor.from_config(build_homes(root))
    yield supervisor
    supervisor.close()


def pid_of(sup: Supervisor, profile: str, session: str) -> int:
    """The pid of the live kernel of (profile, session), top-level owner."""
    rows = [
        r
        for r in sup.kernels.kernels()
        if r["profile"] == profile and r["session"] == session and not r["chain"]
    ]
    assert len(rows) == 1, rows
    pid = rows[0]["pid"]
    assert isinstance(pid, int)
    return pid


def dead(*pids: int) -> bool:
    return not any(alive(p) for p in pids)


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
