"""docs/security.md#credentials-checked-when-used: each run re-checks its credential files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from multiplex import ProfileConfigError, Supervisor
from multiplex.profiles import read_credential

CONFIG = "terminal:\n  credential_files: [credentials/token.txt]\n  timeout: 10\napprovals:\n  mode: off\n"
SHOW = 'cat "$CREDENTIALS_DIRECTORY/credentials/token.txt" 2>&1; echo "[end]"'


@pytest.fixture
def sup(make_home, supervisor_of, tmp_path: Path) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("a", CONFIG, files={"credentials/token.txt": "cred-a-abcdef123456\n"})
    (tmp_path / "outside.txt").write_text("OUTSIDE-SECRET-do-not-mount\n")
    return supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")  # type: ignore[no-any-return]


def _swap_for_link(sup: Supervisor, target: Path) -> Path:
    token = sup.profiles["a"].home / "credentials/token.txt"
    token.unlink()
    token.symlink_to(target)
    return token


def test_a_file_swapped_for_a_link_outside_after_load_is_not_mounted(
    sup: Supervisor, tmp_path: Path
) -> None:
    assert sup.run(SHOW, profile="a").stdout.startswith("[REDACTED")  # mounted, masked
    _swap_for_link(sup, tmp_path / "outside.txt")
    result = sup.run(SHOW, profile="a")
    assert "OUTSIDE-SECRET" not in result.stdout + result.stderr
    assert "No such file" in result.stdout
    assert "not mounted (resolves outside the profile home): credentials/token.txt" in result.stderr


def test_after_a_reload_flagged_it_the_last_good_state_does_not_mount_it(
    sup: Supervisor, tmp_path: Path
) -> None:
    _swap_for_link(sup, tmp_path / "outside.txt")
    assert sup.reload("a").result == "error"
    assert "resolves outside the profile home" in (sup.profiles["a"].error or "")
    result = sup.run(SHOW, profile="a")  # still served from the last good state ...
    assert "OUTSIDE-SECRET" not in result.stdout + result.stderr  # ... but never mounted
    assert "not mounted" in result.stderr


def test_a_hard_link_to_a_file_outside_is_refused(sup: Supervisor, tmp_path: Path) -> None:
    token = sup.profiles["a"].home / "credentials/token.txt"
    token.unlink()
    os.link(tmp_path / "outside.txt", token)
    result = sup.run(SHOW, profile="a")
    assert "OUTSIDE-SECRET" not in result.stdout + result.stderr
    assert "has another hard link" in result.stderr


def test_a_fifo_is_refused_without_blocking(sup: Supervisor) -> None:
    token = sup.profiles["a"].home / "credentials/token.txt"
    token.unlink()
    os.mkfifo(token)
    result = sup.run(SHOW, profile="a")
    assert "is not a regular file" in result.stderr


def test_a_link_that_stays_inside_the_home_is_mounted(sup: Supervisor) -> None:
    home = sup.profiles["a"].home
    (home / "credentials/v2.txt").write_text("cred-a-rotated-987654\n")
    _swap_for_link(sup, home / "credentials/v2.txt")
    assert sup.reload("a").result == "ok"
    result = sup.run(SHOW, profile="a")
    assert result.stdout.startswith("[REDACTED") and result.stderr == ""


def test_read_credential_names_the_file_never_its_content(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "credentials").mkdir(parents=True)
    (tmp_path / "outside").write_text("PEM-BODY-LINE-SECRET")
    (home / "credentials/k").symlink_to(tmp_path / "outside")
    with pytest.raises(ProfileConfigError) as caught:
        read_credential(home, "credentials/k")
    assert "credentials/k" in str(caught.value) and "PEM-BODY" not in str(caught.value)
    (home / "credentials/ok").write_bytes(b"inside")
    assert read_credential(home, "credentials/ok") == b"inside"


@pytest.mark.parametrize("lone", [True, False])
def test_a_rotated_credential_is_masked_at_once(make_home, supervisor_of, lone: bool) -> None:  # type: ignore[no-untyped-def]
    if not lone:
        make_home("b", "")  # two homes: one recursive watch over profiles/
    make_home("a", CONFIG, files={"credentials/token.txt": "cred-a-abcdef123456\n"})
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: inotify, debounce_ms: 20}\n")
    sup.start()
    epoch = sup.profiles["a"].epoch
    token = sup.profiles["a"].home / "credentials/token.txt"
    token.write_text("cred-a-NEW-ROTATED-0042\n")
    deadline = time.monotonic() + 10
    while sup.profiles["a"].epoch == epoch and time.monotonic() < deadline:
        time.sleep(0.02)
    result = sup.run(SHOW, profile="a")
    assert "NEW-ROTATED" not in result.stdout
    assert result.stdout.startswith("[REDACTED")
