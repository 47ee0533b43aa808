"""A real gateway for the tests: profile homes on disk, uvicorn on a free loopback port.

``gateway`` starts the server in a background thread of this process (so the
tests can also look at the supervisor), talks to it over real HTTP with httpx,
and stops it with the same graceful stop SIGTERM triggers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from tests.conftest import write_home

ADMIN = "admin-token-for-tests-0123456789"
TOKENS = {
    "alpha": "alpha-token-for-tests-aaaa1111",
    "beta": "beta-token-for-tests-bbbb2222",
    "gamma": "gamma-token-for-tests-cccc3333",
}

# strict: everything not allowlisted asks (docs/configuration.md#configyaml-keys), so tests choose what parks.
ALPHA = """\
    terminal:
      cwd: .
      timeout: 20
    command_allowlist: ["true", "false", "echo ok *", "printf *"]
    approvals:
      mode: strict
      timeout: 30
"""
BETA = """\
    terminal:
      cwd: .
    command_allowlist: ["true"]
    approvals:
      mode: strict
      timeout: 30
"""
# approvals.timeout: 1 -> an unanswered prompt times out within a second.
GAMMA = """\
    terminal:
      cwd: .
    command_allowlist: ["true"]
    approvals:
      mode: strict
      timeout: 1
"""
BROKEN = """\
    command_allowlist:
      bad: shape
"""
CONFIG = """\
    profiles_dir: profiles
    default_profile: alpha
    routes:
      - {profile: beta, platform: telegram, chat_id: "42"}
    watch: {mode: polling, debounce_ms: 20}
"""


@dataclass
class Api:
    """One caller of the gateway (a token, or none)."""

    base: str
    token: str | None

    def client(self, timeout: float = 15.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=timeout)

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        with self.client() as c:
            return c.request(method, path, **kw)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("POST", path, **kw)

    def submit(self, commands: list[str], **body: Any) -> str:
        r = self.post("/v1/runs", json={"commands": commands, **body})
        assert r.status_code == 202, r.text
        run_id = r.json()["run_id"]
        assert isinstance(run_id, str)
        return run_id

    def run(self, run_id: str) -> dict[str, Any]:
        r = self.get(f"/v1/runs/{run_id}")
        assert r.status_code == 200, r.text
        data: dict[str, Any] = r.json()
        return data

    def wait(self, run_id: str, *statuses: str, timeout: float = 15.0) -> dict[str, Any]:
        """Poll until the run's status is one of ``statuses`` (default: finished)."""
        want = statuses or ("completed", "failed", "cancelled")
        deadline = time.monotonic() + timeout
        while True:
            data = self.run(run_id)
            if data["status"] in want:
                return data
            if time.monotonic() > deadline:
                raise AssertionError(f"run stayed {data['status']}, wanted {want}: {data}")
            time.sleep(0.02)

    def answer(self, run_id: str, approval_id: str, choice: str, **kw: Any) -> httpx.Response:
        body = {"approval_id": approval_id, "choice": choice, **kw}
        return self.post(f"/v1/runs/{run_id}/approval", json=body)

    def parked(self, commands: list[str], **body: Any) -> tuple[str, dict[str, Any]]:
        """Submit a run and wait until it waits for an approval."""
        run_id = self.submit(commands, **body)
        data = self.wait(run_id, "waiting_for_approval")
        assert data["pending_approval"] is not None, data
        return run_id, data["pending_approval"]


@dataclass
class Gateway:
    """A running gateway: its URL, supervisor, homes and one Api per token."""

    server: GatewayServer
    sup: Supervisor
    root: Path
    homes: dict[str, Path]
    admin: Api
    profile: dict[str, Api]
    anonymous: Api
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return self.server.url.rstrip("/")

    def as_token(self, token: str | None) -> Api:
        return Api(self.base, token)


def make_homes(root: Path) -> dict[str, Path]:
    profiles = root / "profiles"
    homes = {
        "alpha": write_home(profiles, "alpha", ALPHA, f"MULTIPLEX_TOKEN={TOKENS['alpha']}\n"),
        "beta": write_home(profiles, "beta", BETA, f"MULTIPLEX_TOKEN={TOKENS['beta']}\n"),
        "gamma": write_home(profiles, "gamma", GAMMA, f"MULTIPLEX_TOKEN={TOKENS['gamma']}\n"),
        "broken": write_home(
            profiles, "broken", BROKEN, "MULTIPLEX_TOKEN=broken-token-xyz-0123456789\n"
        ),
    }
    (root / "multiplex.yaml").write_text(textwrap.dedent(CONFIG))
    return homes


@dataclass
class Up:
    """A real ``multiplex up`` subprocess, its API and the stderr lines it wrote so far."""

    proc: subprocess.Popen[str]
    api: Api
    stderr: list[str]

    def stop(self) -> int:
        """SIGTERM (the graceful stop), then its exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(timeout=60)


def start_up(root: Path, env: Mapping[str, str] = {}) -> Up:
    """``multiplex up --port 0`` on ``root/multiplex.yaml`` with the ADMIN token (and ``env``
    added to the environment); its stderr is read on (so its logs never fill the pipe)."""
    env = {**os.environ, **env, "MULTIPLEX_ADMIN_TOKEN": ADMIN}
    config = str(root / "multiplex.yaml")
    proc = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "--config", config, "up", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        found = re.search(r"multiplex gateway on (http://[^ ]+/)", line)
        if found:
            threading.Thread(target=lines.extend, args=(proc.stderr,), daemon=True).start()
            return Up(proc, Api(found.group(1).rstrip("/"), ADMIN), lines)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("multiplex up did not start: " + "".join(lines))


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    homes = make_homes(tmp_path)
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    sup.start()
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=5.0).start()
    base = server.url.rstrip("/")
    gw = Gateway(
        server=server,
        sup=sup,
        root=tmp_path,
        homes=homes,
        admin=Api(base, ADMIN),
        profile={name: Api(base, token) for name, token in TOKENS.items()},
        anonymous=Api(base, None),
    )
    try:
        yield gw
    finally:
        server.stop()
        sup.close()


class SseReader:
    """Reads ``event:``/``data:`` frames from a live text/event-stream response."""

    def __init__(self, response: httpx.Response) -> None:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        self._lines = response.iter_lines()
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.last_id: str | None = None  # the ``id:`` of the last event read, if it had one

    def next(self) -> tuple[str, dict[str, Any]] | None:
        """The next event, or None when the server closed the stream."""
        name: str | None = None
        for line in self._lines:
            if line.startswith("id: "):
                self.last_id = line[len("id: ") :]
            elif line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: ") and name is not None:
                event = (name, json.loads(line[len("data: ") :]))
                self.seen.append(event)
                return event
        return None

    def until(self, want: Callable[[str, dict[str, Any]], bool]) -> tuple[str, dict[str, Any]]:
        while True:
            event = self.next()
            if event is None:
                raise AssertionError(f"stream closed before the event; saw {self.seen}")
            if want(*event):
                return event

    def run_events(self, run_id: str, *, output: bool = False) -> list[str]:
        """The names of ``run_id``'s events from here, up to and including ``run.finished``.

        ``command.output`` (a command's live output, as many as its writes) only with ``output``.
        """
        names: list[str] = []
        while not names or names[-1] != "run.finished":
            name, _ = self.until(lambda n, d: d.get("run_id") == run_id)
            if output or name != "command.output":
                names.append(name)
        return names

    def connected(self) -> SseReader:
        """Wait for the ``: connected`` comment (the subscription exists from then on)."""
        for line in self._lines:
            if line == ": connected":
                return self
        raise AssertionError("stream closed before it connected")
