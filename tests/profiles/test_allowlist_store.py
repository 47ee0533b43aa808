"""AllowlistStore: reconcile with hand edits, grants, revocations, failures (docs/allowlist.md)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex._errors import ProfileConfigError, RuleSyntaxError
from multiplex.profiles._loader import read_allowlist
from multiplex.profiles.allowlist._allowlist import AllowlistStore, ReconcileResult

HEADER = "# operator notes: do not lose me\nterminal:\n  timeout: 60  # seconds\n"
FOOTER = "approvals:\n  mode: manual  # ask\n"


def hand_write(path: Path, rules: list[str]) -> None:
    """What an operator's editor does: rewrite the whole file."""
    body = "".join(f"  - {yaml.safe_dump(r, width=1 << 30).splitlines()[0]}\n" for r in rules)
    path.write_text(HEADER + "command_allowlist:\n" + (body or "  []\n") + FOOTER)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    hand_write(path, ["git status", "ls *"])
    return path


def test_a_grant_after_a_hand_edit_keeps_the_edit(config: Path) -> None:
    store = AllowlistStore(config)
    hand_write(config, ["ls *", "npm test"])  # revoke `git status`, add `npm test` by hand
    store.grant("docker *")
    assert sorted(read_allowlist(config)) == ["docker *", "ls *", "npm test"]
    assert not store.allows(["git", "status"])
    assert store.allows(["npm", "test"]) and store.allows(["docker", "ps"])
    assert config.read_text().startswith(HEADER) and config.read_text().endswith(FOOTER)


def test_reload_makes_a_hand_revocation_effective_at_once(config: Path) -> None:
    store = AllowlistStore(config)
    assert store.allows(["git", "status"])
    hand_write(config, ["ls *", "npm test"])
    result = store.reload()
    assert result == ReconcileResult(frozenset({"npm test"}), frozenset({"git status"}))
    assert not store.allows(["git", "status"])
    assert store.match(["npm", "test"]) == "npm test"


def test_initial_is_the_baseline_without_reading_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("command_allowlist: [oops\n")  # unreadable, but the caller already read it
    store = AllowlistStore(path, initial=["git status"])
    assert store.rules() == ["git status"]
    with pytest.raises(ProfileConfigError):
        AllowlistStore(path)


def test_a_malformed_file_on_reload_raises_and_keeps_memory(config: Path) -> None:
    store = AllowlistStore(config)
    config.write_text("command_allowlist: {git: status}\n")
    with pytest.raises(ProfileConfigError, match="command_allowlist"):
        store.reload()
    assert store.rules() == ["git status", "ls *"]


def test_grant_validates_the_rule_and_writes_nothing_when_it_does_not_parse(config: Path) -> None:
    before = config.read_bytes()
    store = AllowlistStore(config)
    for bad in ("", "*", "git 'status", "a\nb"):
        with pytest.raises(RuleSyntaxError):
            store.grant(bad)
    assert config.read_bytes() == before


def test_revoke_removes_from_memory_and_disk_and_reports_presence(config: Path) -> None:
    store = AllowlistStore(config)
    assert store.revoke("ls *") is True
    assert read_allowlist(config) == ["git status"]
    assert not store.allows(["ls", "x"])
    assert store.revoke("ls *") is False
    hand_write(config, ["git status", "make"])  # added by hand, not reloaded yet
    assert store.revoke("make") is True
    assert read_allowlist(config) == ["git status"]


def test_a_regrant_after_a_hand_revocation_is_written_again(config: Path) -> None:
    store = AllowlistStore(config)
    hand_write(config, ["ls *"])  # the operator removes `git status`; no reload yet
    store.grant("git status")  # a human approves it "always" again
    assert sorted(read_allowlist(config)) == ["git status", "ls *"]


def test_a_rule_that_does_not_parse_on_disk_is_kept_but_allows_nothing(
    config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hand_write(config, ["*", "ls *"])
    with caplog.at_level(logging.WARNING):
        store = AllowlistStore(config)
    assert "*" in store.rules() and "ignored" in caplog.text
    assert store.match(["rm", "-rf", "/"]) is None
    store.grant("make")
    assert read_allowlist(config) == ["*", "ls *", "make"]


def test_legacy_string_is_recovered_without_rewriting_then_written_as_a_list(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.yaml"
    legacy = "# old tool wrote this\ncommand_allowlist: \"['git status', 'ls *']\"\n"
    path.write_text(legacy)
    store = AllowlistStore(path)
    store.reload()
    assert store.rules() == ["git status", "ls *"]
    assert path.read_text() == legacy  # reading never rewrites
    store.grant("make")
    assert yaml.safe_load(path.read_text())["command_allowlist"] == ["git status", "ls *", "make"]
    assert path.read_text().startswith("# old tool wrote this\n")


def test_concurrent_grants_from_threads_all_land(config: Path) -> None:
    store = AllowlistStore(config)
    threads = [
        threading.Thread(target=lambda n=n: [store.grant(f"t{n} run {i}") for i in range(20)])
        for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    on_disk = read_allowlist(config)
    assert len(on_disk) == 2 + 160 == len(set(on_disk))
    assert store.unsaved == frozenset()


# -- failures: a real lock held by another process, a real broken file ----------

HOLD_LOCK = textwrap.dedent(
    """
    import sys, time
    from filelock import FileLock
    with FileLock(sys.argv[1], preserve_lock_file=True):
        print("held", flush=True)
        sys.stdin.readline()
    """
)


def test_a_write_that_cannot_take_the_lock_is_logged_kept_and_retried(
    config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = AllowlistStore(config, lock_timeout=0.2)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, f"{config}.lock"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with caplog.at_level(logging.WARNING):
            store.grant("docker *")  # does not raise
            store.revoke("ls *")
        assert "could not save" in caplog.text and str(config) in caplog.text
        assert store.allows(["docker", "ps"]) and not store.allows(["ls", "-l"])
        assert store.unsaved == frozenset({"docker *"})
        assert read_allowlist(config) == ["git status", "ls *"]
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10)
    store.grant("make")  # the next write persists everything still pending
    assert read_allowlist(config) == ["git status", "docker *", "make"]
    assert store.unsaved == frozenset()


def test_a_broken_file_is_never_replaced_and_the_grant_waits_for_the_fix(
    config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = AllowlistStore(config)
    broken = config.read_text().replace("approvals:", "approvals: [")
    config.write_text(broken)  # the operator is mid-edit
    with caplog.at_level(logging.WARNING):
        store.grant("docker *")
    assert config.read_text() == broken
    assert "invalid YAML" in caplog.text
    assert store.allows(["docker", "ps"]) and store.unsaved == frozenset({"docker *"})
    hand_write(config, ["git status", "ls *", "npm test"])  # fixed by hand
    store.grant("make")
    assert read_allowlist(config) == ["git status", "ls *", "npm test", "docker *", "make"]


# -- random interleavings of hand edits, grants and revocations across two stores -

RULES = ["git status", "ls *", "npm test", "docker *", "make", "cargo build *"]
op = st.one_of(
    st.tuples(st.just("grant"), st.integers(0, 1), st.sampled_from(RULES)),
    st.tuples(st.just("revoke"), st.integers(0, 1), st.sampled_from(RULES)),
    st.tuples(st.just("hand_add"), st.integers(0, 1), st.sampled_from(RULES)),
    st.tuples(st.just("hand_remove"), st.integers(0, 1), st.sampled_from(RULES)),
    st.tuples(st.just("reload"), st.integers(0, 1), st.just("")),
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(initial=st.sets(st.sampled_from(RULES)), ops=st.lists(op, max_size=25))
def test_interleavings_never_revive_a_revocation_nor_lose_a_hand_addition(
    tmp_path_factory: pytest.TempPathFactory, initial: set[str], ops: list[tuple[str, int, str]]
) -> None:
    path = tmp_path_factory.mktemp("race") / "config.yaml"
    hand_write(path, sorted(initial))
    stores = [AllowlistStore(path), AllowlistStore(path)]
    # The model: a rule is on disk iff the last thing that happened to it was a
    # grant or a hand addition (not a revoke() or a hand removal).
    present = {rule: rule in initial for rule in RULES}
    for kind, which, rule in ops:
        store = stores[which]
        if kind == "grant":
            store.grant(rule)
            present[rule] = True
        elif kind == "revoke":
            store.revoke(rule)
            present[rule] = False
        elif kind in ("hand_add", "hand_remove"):
            current = read_allowlist(path)
            if kind == "hand_add" and rule not in current:
                current.append(rule)
            elif kind == "hand_remove":
                current = [r for r in current if r != rule]
            hand_write(path, current)
            present[rule] = kind == "hand_add"
            store.reload()  # this store's watcher fired; the other one is stale
        else:
            store.reload()
        on_disk = read_allowlist(path)
        assert {r for r in RULES if present[r]} == set(on_disk), (kind, rule)
        assert len(on_disk) == len(set(on_disk))
        assert set(store.rules()) == set(on_disk)  # the store that acted is in sync
        text = path.read_text()
        assert text.startswith(HEADER) and text.endswith(FOOTER)


def test_an_entry_that_does_not_parse_allows_nothing_and_is_named_with_its_line(
    config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hand_write(config, ["git status", "*", "ls *"])
    with caplog.at_level(logging.WARNING):
        store = AllowlistStore(config)
    assert store.rules() == ["git status", "*", "ls *"]  # kept, never dropped from the file
    assert store.size == 2
    (entry,) = store.invalid()
    assert entry.text == "*" and entry.line == 6 and "every command" in entry.error
    assert f"{config}:6: command_allowlist:" in caplog.text
    assert not store.allows(["rm", "-rf", "/"])
    # A hand fix is picked up; the entry stops being invalid.
    hand_write(config, ["git status", "ls *"])
    store.reload()
    assert store.size == 2 and store.invalid() == ()
