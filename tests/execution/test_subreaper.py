"""docs/execution.md#unsandboxed-sandbox-none: sub-reapers kept from one command to the next.

A sub-reaper serves many commands, one at a time: nothing of one command (its
processes, its cwd, a stop meant for it) reaches the next one.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from multiplex.execution import _subreaper
from multiplex.execution._process import run_process
from multiplex.execution._reaper import descendants

ENV = {"PATH": os.defpath}


def reaped(command: str, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    return run_process(
        ["bash", "-c", command],
        env=ENV,
        cwd=cwd,
        timeout=20,
        tracker=None,
        run_id=None,
        backend="local",
        sandbox="none",
        reaped=True,
    )


def sub_reapers() -> list[int]:
    helper = _subreaper._helper
    assert helper is not None
    return descendants(helper.proc.pid)


def test_commands_in_turn_are_served_without_a_fork_each() -> None:
    pids = set()
    for _ in range(20):
        result = reaped("echo $PPID")
        assert result.exit_code == 0
        pids.add(int(result.stdout))
    assert len(pids) <= 4  # forked per command before: 20


def test_a_command_starts_where_asked_and_the_next_where_the_supervisor_is(tmp_path: Path) -> None:
    assert reaped("pwd", cwd=tmp_path).stdout.strip() == str(tmp_path)
    for _ in range(4):  # whichever sub-reaper takes it
        assert reaped("pwd").stdout.strip() == os.getcwd()


def test_a_stop_that_came_too_late_never_reaches_the_next_command() -> None:
    reaped("true")  # the helper and its sub-reapers are up
    for pid in sub_reapers():  # as a stop racing the end of a run would
        os.killpg(pid, signal.SIGTERM)
    for _ in range(4):
        result = reaped("sleep 0.2; echo survived")
        assert (result.exit_code, result.stdout) == (0, "survived\n")


def test_a_finished_runs_handle_signals_nothing() -> None:
    first = _subreaper.spawn_reaped(["true"], env=ENV, cwd=None)
    assert first.wait() == 0
    first.close()
    second = _subreaper.spawn_reaped(["sleep", "0.5"], env=ENV, cwd=None)
    try:
        first.signal_group(signal.SIGKILL)  # the old handle: its sub-reaper may serve `second`
        assert second.wait() == 0
        os.kill(first.pid, 0)  # and that sub-reaper is still there
    finally:
        second.close()
