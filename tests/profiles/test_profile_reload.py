"""Profile reloads: epochs, touch-only edits, our own writes, edits back to old bytes."""

from __future__ import annotations

import os
from pathlib import Path

from multiplex.profiles import Profile

BASE = "# operator\ncommand_allowlist:\n  - git status\n"


def edit(path: Path, text: str) -> None:
    tmp = path.with_name(".edit.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def loaded(tmp_path: Path, text: str = BASE) -> Profile:
    (tmp_path / "config.yaml").write_text(text)
    profile = Profile("p", tmp_path)
    assert profile.reload().result == "ok"
    return profile


def test_touch_and_resave_are_no_ops(tmp_path: Path) -> None:
    profile = loaded(tmp_path)
    os.utime(profile.config_path)
    assert profile.reload().result == "unchanged"
    edit(profile.config_path, BASE)
    assert profile.reload().result == "unchanged" and profile.epoch == 1


def test_own_write_is_not_a_new_epoch(tmp_path: Path) -> None:
    profile = loaded(tmp_path)
    profile.allowlist.grant("npm test")
    result = profile.reload()
    assert result.result == "unchanged" and profile.epoch == 1
    assert profile.allowlist.allows(["npm", "test"])


def test_hand_edit_back_to_the_old_bytes_after_our_write_revokes(tmp_path: Path) -> None:
    # Regression: the profile's digest was of the bytes before our own write;
    # an edit restoring exactly those bytes looked like "unchanged" and the
    # revoked grant stayed allowed.
    profile = loaded(tmp_path)
    profile.allowlist.grant("rm -rf ./site")
    edit(profile.config_path, BASE)  # the operator deletes the new line
    assert profile.reload().result == "ok"
    assert not profile.allowlist.allows(["rm", "-rf", "./site"])
    assert "rm -rf ./site" not in profile.config_path.read_text()


def test_valid_change_bumps_the_epoch_and_error_keeps_last_good(tmp_path: Path) -> None:
    profile = loaded(tmp_path)
    edit(profile.config_path, BASE + "approvals:\n  deny: ['git push *']\n")
    assert profile.reload().result == "ok" and profile.epoch == 2
    edit(profile.config_path, "approvals: [broken\n")
    result = profile.reload()
    assert result.result == "error" and profile.epoch == 2 and profile.status == "error"
    assert profile.state.settings.approvals.deny == ("git push *",)
    edit(profile.config_path, BASE)
    assert profile.reload().result == "ok" and profile.status == "ok" and profile.epoch == 3
