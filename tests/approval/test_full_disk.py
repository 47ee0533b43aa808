"""docs/operations.md#a-full-disk: on a REAL full filesystem (a small tmpfs) nothing runs unrecorded.

A decision that cannot be recorded is refused with its cause, the log keeps
only whole lines, the profile reads ``degraded`` until a record succeeds again,
and a damaged line is reported by the readers, never skipped in silence.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.approval import read_decisions
from multiplex.approval.records._history import DamagedRecord
from multiplex.profiles import append_bytes
from tests.conftest import run_cli, write_home
from tests.tmpfs import fill, mounted_tmpfs

CAUSE = "cannot record the decision: No space left on device"
CONFIG = "terminal:\n  sandbox: none\napprovals:\n  mode: off\n"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs of its own, unmounted afterwards."""
    with mounted_tmpfs(tmp_path / "disk") as where:
        yield where


@pytest.fixture
def sup(tmp_path: Path, disk: Path) -> Iterator[Supervisor]:
    write_home(disk / "profiles", "a", CONFIG)
    config = tmp_path / "multiplex.yaml"
    config.write_text(f"profiles_dir: {disk / 'profiles'}\nwatch: {{mode: 'off'}}\n")
    supervisor = Supervisor.from_config(config)
    try:
        yield supervisor
    finally:
        supervisor.close()


def _fill(disk: Path) -> Path:
    return fill(disk, disk / "profiles/a")  # not even a record fits in the log's last page


def _whole_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), "the log ends inside a line"
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def test_a_decision_that_cannot_be_recorded_is_refused_and_nothing_runs(
    sup: Supervisor, disk: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"  # outside the full filesystem: the command could create it
    assert sup.run("true", profile="a").decision.approved
    log = disk / "profiles/a/logs/decisions.jsonl"
    ballast = _fill(disk)

    result = sup.run(f"touch {marker}", profile="a")
    decision = result.decision
    assert decision.outcome.value == "blocked"
    assert decision.decided_by.value == "policy"
    assert decision.cause == CAUSE
    assert CAUSE in decision.message
    assert result.exit_code is None
    assert not marker.exists()
    assert [r["command"] for r in _whole_lines(log)] == ["true"]
    assert sup.gate.recorder.health.failing(sup.profiles["a"].home) == CAUSE

    ballast.unlink()  # room again: the next decision is recorded and runs
    result = sup.run(f"touch {marker}", profile="a")
    assert result.decision.approved
    assert marker.exists()
    assert [r["command"] for r in _whole_lines(log)] == ["true", f"touch {marker}"]
    assert sup.gate.recorder.health.failing(sup.profiles["a"].home) is None


def test_a_short_write_is_cut_back_to_the_last_whole_line(disk: Path) -> None:
    root = disk / "home"
    root.mkdir()
    append_bytes(root, "log", b'{"n": 1}\n')
    ballast = disk / "ballast"
    with ballast.open("wb", buffering=0) as handle, pytest.raises(OSError):
        while handle.write(b"\0" * 4096):
            pass
    before = (root / "log").read_bytes()
    room = 4096 - len(before) % 4096  # the log's own last page still has this much
    with pytest.raises(OSError) as caught:
        append_bytes(root, "log", b"x" * (room + 100) + b"\n")
    assert caught.value.errno == errno.ENOSPC
    assert (root / "log").read_bytes() == before  # the fragment was cut off again
    ballast.unlink()
    append_bytes(root, "log", b'{"n": 2}\n')
    assert (root / "log").read_bytes() == before + b'{"n": 2}\n'


def test_a_torn_tail_left_by_a_crash_stays_on_a_line_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "log").write_bytes(b'{"n": 1}\n{"n": 2, "cut')
    append_bytes(tmp_path, "log", b'{"n": 3}\n')
    assert (tmp_path / "log").read_bytes().splitlines()[-1] == b'{"n": 3}'


def test_profiles_list_shows_degraded_while_the_last_record_failed(
    sup: Supervisor, disk: Path, tmp_path: Path
) -> None:
    sup.run("true", profile="a")
    ballast = _fill(disk)
    sup.run("true", profile="a")  # refused: the record failed
    config = tmp_path / "multiplex.yaml"
    listed = run_cli("--config", str(config), "profiles", "list", "--json")
    assert listed.returncode == 1, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["status"] == "degraded"
    assert row["error"] == CAUSE
    table = run_cli("--config", str(config), "profiles", "list")
    assert "degraded" in table.stdout

    ballast.unlink()
    sup.run("true", profile="a")  # recorded: the profile is healthy again
    listed = run_cli("--config", str(config), "profiles", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)[0]["status"] == "ok"


def test_readers_report_a_damaged_line_with_its_file_and_line(
    sup: Supervisor, disk: Path, tmp_path: Path
) -> None:
    sup.run("echo one", profile="a")
    log = disk / "profiles/a/logs/decisions.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"ts": 1, "command": "cut in the mid\n')  # planted by hand
    sup.run("echo two", profile="a")
    lines = log.read_bytes().splitlines()
    assert len(lines) == 3

    damaged: list[DamagedRecord] = []
    rows = read_decisions({"a": sup.profiles["a"].home}, damaged=damaged)
    assert [r["command"] for r in rows] == ["echo two", "echo one"]
    assert [(d.profile, d.line, d.why) for d in damaged] == [("a", 2, "not JSON")]

    shown = run_cli("--config", str(tmp_path / "multiplex.yaml"), "decisions")
    assert shown.returncode == 0, shown.stderr
    assert "echo one" in shown.stdout and "echo two" in shown.stdout
    where = os.path.relpath(log, tmp_path)
    assert f"{where}:2: damaged record (not JSON): skipped" in shown.stderr
