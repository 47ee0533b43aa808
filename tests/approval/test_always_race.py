"""docs/approvals.md#outcomes-and-what-the-agent-sees: an "always" answer and the timeout
that falls while its rule is written end one way only.

The answer's record and rule are written before the prompt is settled (tens of ms with
an fsync). A timeout in between used to settle the prompt first: the rule stayed in
``config.yaml`` and the answer's record on disk, while the decision said nobody answered
and the command never ran. The prompt is now held while the answer is saved: a timeout
or cancel meanwhile applies after it, so it is applied only if the answer was not.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from multiplex import Outcome, Supervisor
from multiplex.approval.waiting._pending import Answer, Choice
from tests.approval.test_asking import in_thread, wait_open

COMMAND = "rm -rf ./scratch-dir"


def _slowed(sup: Supervisor, seconds: float, entered: threading.Event) -> None:
    allowlist = sup.profiles["p"].allowlist
    real = allowlist.grant_saved

    def slow(rule: str, **kwargs: Any) -> Any:
        entered.set()
        time.sleep(seconds)  # the deadline passes while the rule is being written
        return real(rule, **kwargs)

    allowlist.grant_saved = slow  # type: ignore[method-assign]


def test_a_timeout_during_the_save_comes_after_the_answer(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  timeout: 1\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    entered = threading.Event()
    _slowed(sup, 1.5, entered)
    thread, box = in_thread(lambda: sup.run(COMMAND, profile="p", context="api"))
    (prompt,) = wait_open(sup)
    assert sup.gate.answer(prompt, Answer(Choice.ALWAYS, by="admin")) is True
    thread.join(10)
    result = box[0]
    assert result.decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]
    log = (sup.profiles["p"].home / "logs/decisions.jsonl").read_text().splitlines()
    outcomes = [json.loads(line)["outcome"] for line in log]
    assert "timeout" not in outcomes and "approved" in outcomes, outcomes
    assert COMMAND in (sup.profiles["p"].home / "config.yaml").read_text()


def test_a_cancel_during_the_save_comes_after_the_answer(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  timeout: 30\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    entered = threading.Event()
    _slowed(sup, 0.3, entered)
    thread, box = in_thread(lambda: sup.run(COMMAND, profile="p", context="api", run_id="r"))
    (prompt,) = wait_open(sup)
    answering, answered = in_thread(
        lambda: sup.gate.answer(prompt, Answer(Choice.ALWAYS, by="admin"))
    )
    assert entered.wait(5)
    assert sup.gate.cancel_run("r") == 0  # held: the cancel does not settle it first
    answering.join(10)
    thread.join(10)
    assert answered == [True]
    assert box[0].decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]


def test_a_failed_save_lets_the_waiting_timeout_apply(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  timeout: 1\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    allowlist = sup.profiles["p"].allowlist

    def broken(rule: str, **kwargs: Any) -> Any:
        time.sleep(1.5)
        raise OSError(28, "No space left on device")

    allowlist.grant_saved = broken  # type: ignore[method-assign]
    thread, box = in_thread(lambda: sup.run(COMMAND, profile="p", context="api"))
    (prompt,) = wait_open(sup)
    with pytest.raises(OSError):  # AnswerNotSaved: the prompt stayed open, then timed out
        sup.gate.answer(prompt, Answer(Choice.ALWAYS, by="admin"))
    thread.join(10)
    assert box[0].decision.outcome is Outcome.TIMEOUT  # type: ignore[attr-defined]
    assert COMMAND not in (sup.profiles["p"].home / "config.yaml").read_text()
