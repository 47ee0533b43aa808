"""docs/kernels.md#lifecycle: idle reap, LRU caps with evicted processes proven dead, timeout, cancel, close."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution.kernels._proctree import tree
from tests.execution.conftest import build_homes, dead, pid_of

SPAWN_CHILD = (
    "import subprocess, sys\n"
    "child = subprocess.Popen(['sleep', '300'])\n"
    "print(child.pid, flush=True)\n"
)


def _child_pid(sup: Supervisor, profile: str, session: str) -> int:
    """Start a `sleep` in the kernel; its HOST pid (in a sandbox the kernel sees its own pid space)."""
    before = set(tree(pid_of(sup, profile, session))) if _has(sup, profile, session) else set()
    out = sup.execute_code(SPAWN_CHILD, profile=profile, session=session)
    assert out.outcome == "ok", out
    (child,) = [p for p in set(tree(pid_of(sup, profile, session))) - before if _comm(p) == "sleep"]
    return child


def _has(sup: Supervisor, profile: str, session: str) -> bool:
    return any(r["profile"] == profile and r["session"] == session for r in sup.kernels.kernels())


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_idle_kernels_are_reaped_and_proven_dead(sup: Supervisor) -> None:
    child = _child_pid(sup, "b", "idle")
    pid = pid_of(sup, "b", "idle")
    before = sup.metrics.kernel_reaps.labels("b")._value.get()
    assert sup.kernels.reap() == 0  # not idle long enough (default 1800 s)
    # An hour later, by the pool's clock:
    assert sup.kernels.reap(now=time.monotonic() + 3600) >= 1
    assert dead(pid, child)
    assert sup.metrics.kernel_reaps.labels("b")._value.get() == before + 1
    fresh = sup.execute_code("1", profile="b", session="idle")
    assert fresh.fresh_kernel


def test_lru_cap_per_profile_evicts_the_least_recently_used(sup: Supervisor) -> None:
    # Profile c: max_session_kernels 2.
    first_child = _child_pid(sup, "c", "lru-1")
    first = pid_of(sup, "c", "lru-1")
    sup.execute_code("1", profile="c", session="lru-2")
    sup.execute_code("2", profile="c", session="lru-1")  # lru-2 is now the least recent
    second = pid_of(sup, "c", "lru-2")
    sup.execute_code("3", profile="c", session="lru-3")
    assert dead(second)
    assert not dead(first, first_child)
    sessions = sorted(str(r["session"]) for r in sup.kernels.kernels() if r["profile"] == "c")
    assert sessions == ["lru-1", "lru-3"]
    sup.execute_code("4", profile="c", session="lru-4")
    assert dead(first, first_child)
    assert sup.metrics.kernel_evictions.labels("c")._value.get() >= 2


def test_max_kernels_caps_the_whole_supervisor(tmp_path: Path) -> None:
    config = build_homes(tmp_path)
    config.write_text("profiles_dir: profiles\ncode_execution:\n  max_kernels: 2\n")
    sup = Supervisor.from_config(config)
    try:
        sup.execute_code("1", profile="a", session="g1")
        oldest = pid_of(sup, "a", "g1")
        sup.execute_code("1", profile="b", session="g2")
        sup.execute_code("1", profile="c", session="g3")
        assert len(sup.kernels) == 2 and dead(oldest)
        assert {r["profile"] for r in sup.kernels.kernels()} == {"b", "c"}
    finally:
        sup.close()
    assert len(sup.kernels) == 0


def test_a_cell_past_its_timeout_kills_the_whole_tree(sup: Supervisor) -> None:
    sup.execute_code("state = 1", profile="a", session="timeout")
    child = _child_pid(sup, "a", "timeout")
    everything = tree(pid_of(sup, "a", "timeout"))
    result = sup.execute_code(
        "print('before', flush=True)\nimport time\ntime.sleep(600)",
        profile="a",
        session="timeout",
        timeout=3,
    )
    assert result.outcome == "timeout" and result.stdout == "before\n"  # output up to the kill
    assert result.notice is not None and "code_execution.timeout 3s" in result.notice
    assert child in everything and dead(*everything)
    after = sup.execute_code("'state' in dir()", profile="a", session="timeout")
    assert after.outcome == "ok" and after.result == "False" and after.fresh_kernel


def test_a_cancelled_cell_kills_its_kernel(sup: Supervisor) -> None:
    sup.execute_code("1", profile="b", session="cancel")
    pid = pid_of(sup, "b", "cancel")
    results: list[object] = []
    marker = Path(f"/tmp/mx-cancel-{pid}")
    marker.unlink(missing_ok=True)

    def cell() -> None:
        code = f"open({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(600)"
        results.append(sup.execute_code(code, profile="b", session="cancel", run_id="run-c1"))

    worker = threading.Thread(target=cell)
    worker.start()
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sup.kernels.cancel_run("run-other") == 0
    assert sup.kernels.cancel_run("run-c1") == 1
    worker.join(60)
    marker.unlink(missing_ok=True)
    (result,) = results
    assert getattr(result, "outcome") == "cancelled" and dead(pid)  # noqa: B009


def test_close_disposes_every_kernel(tmp_path: Path) -> None:
    sup = Supervisor.from_config(build_homes(tmp_path))
    child = _child_pid(sup, "a", "close")
    pid = pid_of(sup, "a", "close")
    sup.close()
    assert dead(pid, child) and len(sup.kernels) == 0
    late = sup.execute_code("1", profile="a", session="close")
    assert late.outcome == "refused"


def test_cells_are_recorded_and_counted(sup: Supervisor) -> None:
    secret_code = "token = 'token-a-0123456789'\n1"
    sup.execute_code(secret_code, profile="a", session="records", context="cron")
    log = sup.profiles["a"].home / "logs" / "cells.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    row = [r for r in rows if r["session"] == "records"][-1]
    assert row["context"] == "cron" and row["outcome"] == "ok" and row["turn"].startswith("t")
    assert len(row["code_sha256"]) == 64 and "token-a" not in log.read_text()
    assert sup.metrics.kernel_cells.labels("a", "ok")._value.get() >= 1
    assert sup.metrics.kernel_spawns.labels("a")._value.get() >= 1
    text = sup.metrics.render().decode()
    for name in ("cells", "spawns", "evictions", "reaps", "kills"):
        assert f"multiplex_kernel_{name}_total" in text


@pytest.mark.parametrize("key", ["max_session_kernels: 0", "timeout: -1", "max_tool_calls: many"])
def test_bad_code_execution_config_names_the_key(tmp_path: Path, key: str) -> None:
    from multiplex.profiles import Profile

    home = tmp_path / "p"
    home.mkdir()
    (home / "config.yaml").write_text(f"code_execution:\n  {key}\n")
    profile = Profile("p", home)
    profile.reload()
    assert profile.error is not None
    assert f"code_execution.{key.split(':')[0]}" in str(profile.error)
    assert "Traceback" not in str(profile.error)
