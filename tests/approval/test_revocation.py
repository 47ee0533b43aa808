"""docs/approvals.md#order-of-checks step 11 and docs/allowlist.md: revocations take effect at once, even mid-prompt."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

import pytest

from multiplex import Outcome, Supervisor
from multiplex.approval.waiting._pending import Answer, Choice
from multiplex.approval.waiting._prompt import CallbackPrompter


def wait_for(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached")


def atomic_write(path, text: str) -> None:  # type: ignore[no-untyped-def]
    tmp = path.with_name(path.name + ".tmp-edit")
    tmp.write_text(text)
    tmp.replace(path)


@pytest.fixture
def live(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("p", "command_allowlist:\n  - git status\napprovals:\n  timeout: 30\n")
    sup = supervisor_of(
        "profiles_dir: profiles\ndefault_profile: p\nwatch: {mode: auto, debounce_ms: 20}\n"
    )
    sup.start()
    return sup  # type: ignore[no-any-return]


def test_deny_added_by_hand_while_prompt_pending_blocks_even_if_answered_once(
    live: Supervisor,
) -> None:
    config = live.profiles["p"].config_path
    box: list[object] = []
    thread = threading.Thread(
        target=lambda: box.append(live.run("rm -rf ./data", profile="p", context="api"))
    )
    thread.start()
    wait_for(lambda: bool(live.gate.tables().get("p") and live.gate.tables()["p"].list_open()))
    epoch = live.profiles["p"].epoch
    atomic_write(
        config, "command_allowlist:\n  - git status\napprovals:\n  timeout: 30\n  deny: ['rm *']\n"
    )
    wait_for(lambda: live.profiles["p"].epoch > epoch)  # the watcher saw the hand edit
    live.gate.tables()["p"].list_open()[0].answer(Answer(Choice.ONCE))
    thread.join(10)
    decision = box[0].decision  # type: ignore[attr-defined]
    assert decision.outcome is Outcome.BLOCKED and decision.cause.startswith(
        "revoked while waiting"
    )
    assert decision.rule == "rm *" and box[0].exit_code is None  # type: ignore[attr-defined]


def test_revoked_allowlist_rule_takes_effect_at_once_and_is_asked_again(live: Supervisor) -> None:
    profile = live.profiles["p"]
    asked: list[str] = []
    live.gate.set_prompter(CallbackPrompter(lambda r: asked.append(r.command) or "always"))
    first = live.run("rm -rf ./site", profile="p", session="s", context="interactive")
    assert first.decision.outcome is Outcome.APPROVED and asked == ["rm -rf ./site"]
    second = live.run("rm -rf ./site", profile="p", session="s", context="interactive")
    assert second.decision.decided_by.value == "rule" and len(asked) == 1
    # The operator deletes the saved line by hand.
    text = profile.config_path.read_text()
    atomic_write(
        profile.config_path,
        "\n".join(line for line in text.splitlines() if "rm -rf" not in line) + "\n",
    )
    wait_for(lambda: "rm -rf ./site" not in profile.allowlist.rules())
    third = live.run("rm -rf ./site", profile="p", session="s", context="interactive")
    assert len(asked) == 2 and third.decision.decided_by.value == "user"  # asked again
    assert "rm -rf ./site" in profile.allowlist.rules()  # that new "always" saved it again


def test_in_flight_check_uses_the_current_store(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "p", "approvals:\n  mode: strict\n  timeout: 30\ncommand_allowlist: ['make deploy']\n"
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    with sup.turn("p", context="cron"):  # the turn started with the rule present
        sup.profiles["p"].allowlist.revoke("make deploy")
        result = sup.run("make deploy")
    assert (
        result.decision.outcome is Outcome.BLOCKED and result.decision.cause == "unattended: cron"
    )


def test_malformed_edit_keeps_the_last_good_config(live: Supervisor) -> None:
    profile = live.profiles["p"]
    epoch = profile.epoch
    atomic_write(profile.config_path, "command_allowlist: {broken: yes}\n")
    wait_for(lambda: profile.status == "error")
    assert profile.epoch == epoch and profile.allowlist.allows(["git", "status"])
    assert "command_allowlist" in (profile.error or "")
    errors = live.metrics.registry.get_sample_value(
        "multiplex_config_reloads_total", {"profile": "p", "result": "error"}
    )
    assert errors and errors >= 1
    assert (
        live.test("p", "git status").outcome == "approved"
    )  # still served on the last good config
    atomic_write(profile.config_path, "command_allowlist:\n  - ls *\n")
    wait_for(lambda: profile.status == "ok" and profile.epoch > epoch)
    assert not profile.allowlist.allows(["git", "status"]) and profile.allowlist.allows(
        ["ls", "-la"]
    )
    latency = live.metrics.registry.get_sample_value(
        "multiplex_revocation_latency_seconds_count", {}
    )
    assert latency and latency >= 1


def test_own_writes_do_not_bump_the_epoch(live: Supervisor) -> None:
    profile = live.profiles["p"]
    epoch = profile.epoch
    profile.allowlist.grant("npm test")
    time.sleep(0.5)  # give the watcher time to see our own write
    assert profile.epoch == epoch and profile.status == "ok"


@pytest.mark.parametrize("how", ["swap", "extract"])
def test_a_rule_removed_after_the_profiles_folder_was_restored_is_revoked(
    make_home,
    supervisor_of,
    tmp_path,
    how: str,  # type: ignore[no-untyped-def]
) -> None:
    # An operator restores the profiles folder from a backup, then removes a rule by hand
    # in the restored copy: the watcher follows the new folder, and the rule is revoked.
    make_home("p", "command_allowlist:\n  - git status\n  - uptime\napprovals: {mode: strict}\n")
    make_home("q", "approvals: {mode: strict}\n")
    sup = supervisor_of(
        "profiles_dir: profiles\ndefault_profile: p\nwatch: {mode: auto, debounce_ms: 20}\n"
    )
    sup.start()
    profiles = tmp_path / "profiles"
    assert sup.test("p", "uptime").outcome == "approved"
    if how == "swap":
        shutil.copytree(profiles, tmp_path / "backup")
        profiles.rename(tmp_path / "profiles.old")
        subprocess.run(["cp", "-a", str(tmp_path / "backup"), str(profiles)], check=True)
    else:
        archive = tmp_path / "backup.tgz"
        subprocess.run(["tar", "czf", str(archive), "-C", str(tmp_path), "profiles"], check=True)
        shutil.rmtree(profiles)
        subprocess.run(["tar", "xzf", str(archive), "-C", str(tmp_path)], check=True)
    time.sleep(0.3)  # the restore's own reload first: the edit comes after it, as by hand
    edited = "command_allowlist:\n  - git status\napprovals: {mode: strict}\n"
    atomic_write(profiles / "p" / "config.yaml", edited)
    wait_for(lambda: sup.test("p", "uptime").outcome == "ask")
    assert sup.test("p", "git status").outcome == "approved"
    assert sup.watcher is not None and sup.watcher.alive
