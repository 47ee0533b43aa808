"""Parked decisions: waiting for a human without a waiting thread (docs/gateway.md#limits)."""

from __future__ import annotations

import json
import threading

import pytest

from multiplex import Outcome, Supervisor
from multiplex.approval.waiting._pending import Answer, Choice
from multiplex.scopes import peek_scope
from multiplex.supervision import ParkedRun

ASKS = "rm -rf ./scratch-dir"


@pytest.fixture
def sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  mode: strict\n  timeout: 30\n")
    make_home("fast", "approvals:\n  mode: strict\n  timeout: 0.3\n")
    return supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")  # type: ignore[no-any-return]


def _park(sup: Supervisor, profile: str = "p", command: str = "echo hi") -> ParkedRun:
    step = sup.run_or_park(command, profile=profile, session="s", run_id="r1")
    assert isinstance(step, ParkedRun), step
    return step


def _records(sup: Supervisor, profile: str) -> list[dict[str, object]]:
    path = sup.profile(profile).home / "logs" / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_answered_parked_run_resumes_in_another_thread_and_runs(sup: Supervisor) -> None:
    parked = _park(sup)
    woke = threading.Event()
    parked.when_settled(woke.set)
    assert not woke.is_set() and parked.request.open
    assert parked.request.answer(Answer(Choice.ONCE, by="admin"))
    assert woke.wait(5)
    box: list[object] = []
    worker = threading.Thread(target=lambda: box.append(parked.resume()))
    worker.start()
    worker.join(10)
    result = box[0]
    assert result.decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]
    assert result.stdout == "hi\n"  # type: ignore[attr-defined]
    rows = _records(sup, "p")
    assert [r["outcome"] for r in rows] == ["approved"]  # recorded once
    assert not sup.gate.pending(sup.profile("p")).list_open()


def test_an_unanswered_parked_run_times_out_without_a_waiting_thread(sup: Supervisor) -> None:
    parked = _park(sup, "fast")
    woke = threading.Event()
    parked.when_settled(woke.set)
    # No thread waits on it: the shared deadline timer settles it.
    assert woke.wait(10)
    result = parked.resume()
    assert result.decision.outcome is Outcome.TIMEOUT
    assert result.exit_code is None
    assert "silence is not consent" in result.decision.message.lower()


def test_a_cancelled_parked_run_never_runs_its_command(sup: Supervisor, tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "ran"
    parked = _park(sup, command=f"touch {marker}")
    woke = threading.Event()
    parked.when_settled(woke.set)
    assert sup.gate.cancel_run("r1") == 1
    assert woke.wait(5)
    result = parked.resume()
    assert result.decision.outcome is Outcome.CANCELLED
    assert not marker.exists()


def test_a_callback_registered_after_settling_fires_at_once(sup: Supervisor) -> None:
    parked = _park(sup)
    parked.request.answer(Answer(Choice.DENY, by="admin"))
    fired: list[bool] = []
    parked.when_settled(lambda: fired.append(True))
    assert fired == [True]
    assert parked.resume().decision.outcome is Outcome.DENIED


def test_a_shared_prompt_times_out_for_its_follower_too(sup: Supervisor) -> None:
    leader = _park(sup, "fast")
    follower = sup.run_or_park("echo hi", profile="fast", session="s", run_id="r2")
    assert isinstance(follower, ParkedRun) and follower.request.leader is leader.request
    done = threading.Event()
    count = [0]

    def one() -> None:
        count[0] += 1
        if count[0] == 2:
            done.set()

    follower.when_settled(one)
    leader.when_settled(one)
    assert done.wait(10)
    assert leader.resume().decision.outcome is Outcome.TIMEOUT
    assert follower.resume().decision.outcome is Outcome.TIMEOUT


def test_the_turn_stays_open_while_parked_and_ends_on_resume(sup: Supervisor) -> None:
    ended: list[str] = []
    sup.on_turn_end(lambda scope: ended.append(scope.turn_id))
    parked = _park(sup)
    assert ended == []  # the turn is open while a human decides
    assert peek_scope() is None  # but not bound in the thread that parked it
    parked.request.answer(Answer(Choice.ONCE, by="admin"))
    parked.resume()
    assert ended == [parked.scope.turn_id]
