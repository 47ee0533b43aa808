"""docs/allowlist.md#when-a-grant-ends: an expired or spent grant is told and counted as a hand revocation is.

A real supervisor with its watcher; grants that expire a few seconds ahead (the
file keeps expiries to the second), a grant added by a second process (the real
CLI), and nothing but the timer to notice: no decision is made in between.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable

import pytest

from multiplex import Supervisor
from tests.conftest import run_cli

LOGGER = "multiplex.profiles"


@pytest.fixture
def live(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("p", "command_allowlist:\n  - git status\napprovals:\n  mode: strict\n")
    sup = supervisor_of(
        "profiles_dir: profiles\ndefault_profile: p\nwatch: {mode: auto, debounce_ms: 20}\n"
    )
    sup.start()
    return sup  # type: ignore[no-any-return]


def _ended(sup: Supervisor, reason: str) -> float:
    labels = {"profile": "p", "reason": reason}
    value = sup.metrics.registry.get_sample_value("multiplex_grants_ended_total", labels)
    return value or 0.0


def _latencies(sup: Supervisor) -> float:
    name = "multiplex_revocation_latency_seconds_count"
    return sup.metrics.registry.get_sample_value(name, {}) or 0.0


def _soon(seconds: int) -> dt.datetime:
    # Expiries are kept to the second: a whole second ahead, at least ``seconds`` from now.
    return dt.datetime.fromtimestamp(int(time.time()) + seconds + 1, dt.UTC)


def _wait(check: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not told in time"
        time.sleep(0.05)


def test_an_expiry_is_told_at_its_time_once_with_no_decision_made(
    live: Supervisor, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    store = live.profiles["p"].allowlist
    expires = _soon(2)
    store.grant("ls *", expires=expires)
    assert live.test("p", "ls -la").outcome == "approved"
    before = _latencies(live)
    assert _ended(live, "expired") == 0
    _wait(lambda: _ended(live, "expired") == 1)
    assert time.time() >= expires.timestamp()  # never before its time
    assert _latencies(live) == before + 1
    (line,) = [r.getMessage() for r in caplog.records if "approves nothing now" in r.getMessage()]
    assert str(store.config_path) in line and "'ls *'" in line and "it expired" in line
    assert live.test("p", "ls -la").outcome == "ask"  # strict: it asks again
    time.sleep(1.5)
    assert _ended(live, "expired") == 1  # told once


def test_the_last_use_is_told_as_it_is_taken(
    live: Supervisor, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    live.profiles["p"].allowlist.grant("ls *", uses=2)
    assert live.run("ls", profile="p").decision.approved
    assert _ended(live, "spent") == 0  # one use left
    assert live.run("ls", profile="p").decision.approved
    assert _ended(live, "spent") == 1
    assert any("its last use was taken" in r.getMessage() for r in caplog.records)
    assert live.test("p", "ls").outcome == "ask"
    assert _ended(live, "expired") == 0


def test_a_grant_another_process_adds_is_told_when_it_expires(live: Supervisor) -> None:
    root = live.profiles["p"].home.parent.parent
    added = run_cli("allowlist", "add", "-p", "p", "--expires", "3s", "ls *", cwd=root)
    assert added.returncode == 0, added.stderr
    _wait(lambda: live.test("p", "ls").outcome == "approved")  # the watcher read it
    assert _ended(live, "expired") == 0
    _wait(lambda: _ended(live, "expired") == 1)
    assert live.test("p", "ls").outcome == "ask"


def test_an_earlier_expiry_added_later_is_told_first(live: Supervisor) -> None:
    store = live.profiles["p"].allowlist
    store.grant("cat *", expires=_soon(60))
    store.grant("ls *", expires=_soon(2))
    _wait(lambda: _ended(live, "expired") == 1)
    assert live.test("p", "ls").outcome == "ask"
    assert live.test("p", "cat x").outcome == "approved"


def test_a_grant_that_had_ended_before_it_was_read_is_not_told(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "p",
        "command_allowlist:\n"
        "  - {rule: 'ls *', expires: '2026-01-01T00:00:00Z'}\n"
        "  - {rule: 'cat *', uses: 0}\n"
        "approvals:\n  mode: strict\n",
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    sup.start()
    assert sup.test("p", "ls").outcome == sup.test("p", "cat x").outcome == "ask"
    time.sleep(1.0)
    assert _ended(sup, "expired") == _ended(sup, "spent") == 0
