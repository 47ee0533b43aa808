"""Real ``python -m multiplex up`` nodes sharing one Redis and one profiles folder.

Each :class:`Node` has its own ``multiplex.yaml`` (node id, watch mode) naming
the same profiles folder and Redis; its stderr (JSON logs) is drained by a
thread so a chatty node never blocks on a full pipe.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from tests.conftest import write_home
from tests.gateway.conftest import ADMIN, ALPHA, BETA, GAMMA, TOKENS, Api

__all__ = ["DELTA", "SECRET", "Node", "make_cluster_homes"]

SECRET = "sk-live-cluster-9f8e7d6c5b4a39281706"
# Allowlists sleep (a command that runs for a while) and echo; strict otherwise.
DELTA = """\
    terminal:
      cwd: .
      timeout: 60
    command_allowlist: ["sleep *", "echo ok *"]
    approvals:
      mode: strict
      timeout: 60
"""


def make_cluster_homes(root: Path) -> Path:
    """The shared profiles folder: alpha, beta, gamma as in the gateway tests, and delta."""
    profiles = root / "profiles"
    write_home(profiles, "alpha", ALPHA, f"MULTIPLEX_TOKEN={TOKENS['alpha']}\nAPI_KEY={SECRET}\n")
    write_home(profiles, "beta", BETA, f"MULTIPLEX_TOKEN={TOKENS['beta']}\n")
    write_home(profiles, "gamma", GAMMA, f"MULTIPLEX_TOKEN={TOKENS['gamma']}\n")
    write_home(profiles, "delta", DELTA, "MULTIPLEX_TOKEN=delta-token-for-tests-dddd4444\n")
    return profiles


class Node:
    """One ``multiplex up`` process of the cluster."""

    def __init__(
        self,
        root: Path,
        node_id: str,
        redis_url: str,
        *,
        watch: str = "polling",
        node_timeout: float = 2.0,
    ) -> None:
        self.node_id = node_id
        self.dir = root / f"node-{node_id}"
        self.dir.mkdir(parents=True, exist_ok=True)
        config = self.dir / "multiplex.yaml"
        config.write_text(
            textwrap.dedent(
                f"""\
                profiles_dir: {root / "profiles"}
                default_profile: alpha
                watch: {{mode: {watch}, debounce_ms: 20}}
                cluster:
                  redis_url: {redis_url}
                  node_id: {node_id}
                  node_timeout: {node_timeout}
                """
            )
        )
        env = {k: v for k, v in os.environ.items() if k != "MULTIPLEX_REDIS_URL"}
        env["MULTIPLEX_ADMIN_TOKEN"] = ADMIN
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "multiplex", "--config", str(config), "up", "--port", "0"],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=self.dir,
        )
        assert self.proc.stderr is not None
        self.lines: list[str] = []
        deadline = time.monotonic() + 30
        base = None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if line.startswith("multiplex gateway on "):
                match = re.search(r"http://[^ ]+/", line)
                assert match is not None
                base = match.group(0).rstrip("/")
                break
            self.lines.append(line)
            if not line and self.proc.poll() is not None:
                break
        if base is None:
            self.proc.kill()
            raise AssertionError(f"node {node_id} did not start: {''.join(self.lines)}")
        self.base = base
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()
        self.admin = Api(base, ADMIN)
        self.profile = {name: Api(base, token) for name, token in TOKENS.items()}

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def ready(self) -> bool:
        return self.admin.get("/readyz").status_code == 200

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
