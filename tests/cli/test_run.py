"""``multiplex run`` against a real ``multiplex up`` and ``multiplex exec``: output as it comes (issue 31 item 5).

The command prints a line, then waits for a file the test creates only after it
read that line from the CLI: a CLI that buffered the output until the end
would never show it, and the test would fail (bounded), not pass slowly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import Up
from tests.conftest import run_cli, write_home

pytestmark = pytest.mark.slow

WAITS = "pwd; while [ ! -e go ]; do sleep 0.05; done; echo second >&2; exit 7"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MULTIPLEX_")}


def _line(stream: object, pattern: str, seen: list[str]) -> re.Match[str]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = stream.readline()  # type: ignore[attr-defined]
        assert line, f"the CLI ended before {pattern!r}: {seen}"
        seen.append(line)
        match = re.search(pattern, line)
        if match:
            return match
    raise AssertionError(f"no {pattern!r} in {seen}")


def test_run_asks_and_streams_while_the_command_runs(up: Up) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "run", "-p", "alpha", "--session", "s-run",
         "--", "sh", "-c", "echo first; echo also >&2; sleep 600"],
        cwd=up.root, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        errors: list[str] = []
        asked = _line(proc.stderr, r"waiting for approval (ap-\w+) .*approvals answer", errors)
        answered = up.cli("approvals", "answer", asked[1], "once")
        assert answered.returncode == 0, answered.stderr
        _line(proc.stdout, r"^first$", [])
        _line(proc.stderr, r"^also$", errors)
        # Shown while the command still runs: a buffering CLI would print it only at the end.
        [run] = [r for r in up.admin.get("/v1/runs").json() if r["session_id"] == "s-run"]
        assert run["status"] == "running", json.dumps(
            up.admin.get(f"/v1/runs/{run['run_id']}").json()
        )
        assert up.cli("runs", "cancel", run["run_id"]).returncode == 0
        assert proc.wait(timeout=120) == 1  # approved, but it did not finish
        assert proc.stdout.read() == ""  # type: ignore[union-attr]  (never twice)
        assert "also" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()


def test_run_exit_codes_when_not_run_and_json(up: Up) -> None:
    ran = up.cli("run", "-p", "alpha", "--", "printf", "hello %s", "world")
    assert (ran.returncode, ran.stdout) == (0, "hello world"), ran.stderr
    failed = up.cli("run", "-p", "alpha", "--", "false")
    assert failed.returncode == 1
    as_json = up.cli("run", "-p", "alpha", "--json", "--", "printf ok")
    assert as_json.returncode == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    assert doc["status"] == "completed" and doc["results"][0]["stdout"] == "ok"
    # Denied at the prompt: 4, and the reason on stderr.
    proc = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "run", "-p", "alpha", "--", "echo", "nope"],
        cwd=up.root, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        asked = _line(proc.stderr, r"waiting for approval (ap-\w+)", [])
        assert up.cli("approvals", "answer", asked[1][:8], "deny").returncode == 0
        assert proc.wait(timeout=120) == 4
        assert "denied" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()
    ghost = up.cli("run", "-p", "nobody-here", "--", "true")
    assert ghost.returncode == 2 and "nobody-here" in ghost.stderr
    assert "Traceback" not in ghost.stderr


def test_exec_streams_and_has_json(tmp_path: Path) -> None:
    write_home(tmp_path / "profiles", "h", 'approvals: {mode: "off"}\n')
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: h\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "exec", "-p", "h", "--", "sh", "-c", WAITS],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        cwd = Path(_line(proc.stdout, r"^(/.*)$", [])[1])
        (cwd / "go").touch()
        assert proc.wait(timeout=120) == 7
        assert "second" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()
    done = run_cli("exec", "-p", "h", "--json", "--", "printf hi", cwd=tmp_path, env=_env(),
                   replace_env=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema_version"] == 1 and data["stdout"] == "hi" and data["exit_code"] == 0
