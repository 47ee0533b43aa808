"""A real ``multiplex up`` (a second process) over the gateway tests' homes, shared per module."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.gateway.conftest import TOKENS, Api, make_homes


@dataclass
class Up:
    """A running ``multiplex up``: where it is, its homes, and how to call the CLI against it."""

    proc: subprocess.Popen[str]
    root: Path
    homes: dict[str, Path]
    url: str
    token: str

    @property
    def admin(self) -> Api:
        return Api(self.url, self.token)

    def profile(self, name: str) -> Api:
        return Api(self.url, TOKENS[name])

    def cli(self, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        """The real CLI from the project folder: URL and token come from the files `up` wrote."""
        clean = {k: v for k, v in os.environ.items() if not k.startswith("MULTIPLEX_")}
        clean.update(env or {})
        return run_cli(*args, cwd=self.root, env=clean, replace_env=True)


def start_up(root: Path, *extra: str) -> tuple[subprocess.Popen[str], str, str]:
    """``multiplex up --port 0 [extra…]`` with a generated token; (process, url, token)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MULTIPLEX_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "up", "--port", "0", "--grace", "2", *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        match = re.match(r"multiplex gateway on (\S+) \(admin token: (\S+)\)$", line.strip())
        if match:
            url = match[1].rstrip("/")
            # Answering HTTP means uvicorn runs, so its signal handlers are in place.
            while Api(url, None).get("/healthz").status_code != 200:
                time.sleep(0.05)
            return proc, url, match[2]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"multiplex up did not start: {proc.stderr.read()}")


def stop_up(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, wait, and return what it logged after the start."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.stderr.read() if proc.stderr else ""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    root = tmp_path_factory.mktemp("up")
    homes = make_homes(root)
    for name in ("alpha", "beta"):
        # Each CLI call is a new Python process: on a loaded machine a few of them
        # take longer than the 30 s prompts of the gateway tests' homes.
        config = homes[name] / "config.yaml"
        config.write_text(config.read_text().replace("timeout: 30", "timeout: 900"))
    proc, url, token = start_up(root)
    try:
        yield Up(proc, root, homes, url, token)
    finally:
        stop_up(proc)
