"""docs/operations.md#a-container: ``multiplex up`` as PID 1 reaps what bubblewrap leaves behind.

The gateway runs as PID 1 of a fresh PID namespace (``unshare --pid --fork``,
as a container runtime without ``--init`` would start it), serves sandboxed
commands, and must leave no zombie behind; SIGTERM still stops it gracefully.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import write_home

ADMIN = "pid1-admin-token-0123456789abcdef"
PROFILE = """\
terminal:
  cwd: .
  sandbox: bwrap
command_allowlist: ["true"]
"""

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("unshare", "setsid", "bwrap")) or os.geteuid() != 0,
    reason="needs root, unshare(1) and bwrap for a PID namespace of its own",
)


def _descendants(root: int) -> dict[int, tuple[str, int]]:
    """Every process below ``root``: pid -> (state, ppid), read from /proc."""
    found: dict[int, tuple[str, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(entry.name)] = (fields[0], int(fields[1]))
    below: dict[int, tuple[str, int]] = {}
    parents = {root}
    while True:
        more = {p: v for p, v in found.items() if v[1] in parents and p not in below}
        if not more:
            return below
        below.update(more)
        parents |= set(more)


def test_up_as_pid1_reaps_every_sandbox_and_stops_on_sigterm(tmp_path: Path) -> None:
    write_home(
        tmp_path / "profiles", "p", PROFILE, "MULTIPLEX_TOKEN=pid1-profile-token-0123456789\n"
    )
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: p\n")
    log = tmp_path / "up.log"
    env = {**os.environ, "MULTIPLEX_ADMIN_TOKEN": ADMIN}
    command = [sys.executable, "-m", "multiplex", "--config", str(tmp_path / "multiplex.yaml")]
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            # setsid: PID 1 leads its own session and group, as in a container.
            ["unshare", "--pid", "--fork", "--kill-child", "setsid", *command, "up", "--port", "0"],
            stderr=sink,
            stdout=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
        )
    try:
        deadline = time.monotonic() + 30
        base = None
        while base is None and time.monotonic() < deadline:
            found = re.search(r"multiplex gateway on (http://\S+)/", log.read_text("utf-8"))
            base = found.group(1) if found else None
            assert proc.poll() is None, log.read_text("utf-8")
            time.sleep(0.05)
        assert base is not None, log.read_text("utf-8")
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {ADMIN}"}) as c:
            for _ in range(10):
                body = {"profile": "p", "commands": ["true"], "wait": 30}
                done = c.post("/v1/runs", json=body).json()
                assert done["status"] == "completed", done
                assert done["results"][0]["sandbox"] == "bwrap"
        time.sleep(0.5)
        below = _descendants(proc.pid)
        zombies = {pid: v for pid, v in below.items() if v[0] == "Z"}
        assert not zombies, f"left behind: {zombies}"
        # The namespace's PID 1 (our init) has the gateway as its only child.
        init = [pid for pid, (_state, ppid) in below.items() if ppid == proc.pid]
        assert len(init) == 1
        served = [pid for pid, (_state, ppid) in below.items() if ppid == init[0]]
        assert len(served) == 1
        # Ctrl-C in `podman run -it`: the terminal signals PID 1's process group; the
        # gateway (a group of its own) gets it once, forwarded: a graceful stop.
        assert os.getpgid(init[0]) == init[0] != os.getpgid(os.getpid())
        assert os.getpgid(served[0]) == served[0]
        os.killpg(os.getpgid(init[0]), signal.SIGINT)
        assert proc.wait(30) == 0, log.read_text("utf-8")
        assert '"shutdown.drained"' in log.read_text("utf-8")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
