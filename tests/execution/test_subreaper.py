"""docs/execution.md#unsandboxed-sandbox-none: sub-reapers kept from one command to the next.

A sub-reaper serves many commands, one at a time: nothing of one command (its
processes, its cwd, a stop meant for it) reaches the next one.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from multiplex.execution import _subreaper
from multiplex.execution._process import ProcessTracker, run_process
from multiplex.execution._reaper import descendants

ENV = {"PATH": os.defpath}


def reaped(command: str, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    return reaped_argv(["bash", "-c", command], cwd)


def reaped_argv(argv: list[str], cwd: Path | None = None):  # type: ignore[no-untyped-def]
    return run_process(
        argv,
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
    # Forked per command before: 20. Kept, they are the few the helper holds: two spares,
    # more after a busy moment (at most eight idle), which a loaded machine makes happen.
    assert len(pids) <= 10


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


def test_a_command_that_cannot_start_is_reported_with_its_reason(tmp_path: Path) -> None:
    missing = reaped_argv(["/nonexistent/tool", "x"])
    assert missing.exit_code is None
    assert missing.error == "cannot start /nonexistent/tool: No such file or directory"
    assert missing.stderr == missing.error
    gone = reaped("true", cwd=tmp_path / "gone")  # the sub-reaper's chdir fails
    assert gone.error == f"working directory does not exist: {tmp_path / 'gone'}"
    assert reaped("echo next").stdout == "next\n"  # and that sub-reaper serves on
    # The same where the supervisor starts the process itself (a sandbox's bwrap or nsenter):
    # the folder gone since the plan is named, not the program that was to run in it.
    started = run_process(
        ["bash", "-c", "true"], env=ENV, cwd=tmp_path / "gone", timeout=20, tracker=None,
        run_id=None, backend="local", sandbox="bwrap",
    )  # fmt: skip
    assert started.error == f"working directory does not exist: {tmp_path / 'gone'}"
    assert reaped_argv(["/nonexistent/tool"], cwd=tmp_path).error == (
        "cannot start /nonexistent/tool: No such file or directory"  # a folder that is there
    )


def test_a_cancel_right_after_the_start_stops_the_run() -> None:
    tracker = ProcessTracker()
    tracker.cancel("r1")  # as a cancel racing the start: the tracker stops it when added
    started = time.monotonic()
    result = run_process(
        ["sleep", "30"],
        env=ENV,
        cwd=None,
        timeout=20,
        tracker=tracker,
        run_id="r1",
        backend="local",
        sandbox="none",
        reaped=True,
    )
    assert result.cancelled and result.exit_code is None
    assert time.monotonic() - started < 10


def test_a_long_commands_pid_comes_before_its_end() -> None:
    handle = _subreaper.spawn_reaped(["sleep", "0.5"], env=ENV, cwd=None)
    try:
        deadline = time.monotonic() + 5
        while handle.pid == 0 and time.monotonic() < deadline:
            assert handle.poll() is None
            time.sleep(0.01)
        assert handle.poll() is None  # still running, and its group is known
        assert os.getpgid(handle.pid) == handle.pid
        assert handle.wait() == 0
    finally:
        handle.close()


def test_a_sub_reaper_killed_mid_run_reports_sigkill() -> None:
    handle = _subreaper.spawn_reaped(["sleep", "30"], env=ENV, cwd=None)
    try:
        deadline = time.monotonic() + 5
        while handle.pid == 0 and time.monotonic() < deadline:
            handle.poll()
            time.sleep(0.01)
        os.kill(handle.pid, signal.SIGKILL)
        assert handle.wait(10) == -signal.SIGKILL
        handle.signal_group(signal.SIGKILL)  # its group (the command) is left to this signal
    finally:
        handle.close()
