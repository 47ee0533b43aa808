"""docs/approvals.md#order-of-checks step 8: the smart approver hook."""

from __future__ import annotations

import logging
import time

import pytest

from multiplex import Outcome, Supervisor

CMD = "rm -rf ./build-output"


@pytest.fixture
def sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("s", "approvals:\n  mode: smart\n  timeout: 1\n")
    return supervisor_of("profiles_dir: profiles\ndefault_profile: s\n")  # type: ignore[no-any-return]


def test_smart_approve_and_deny(sup: Supervisor) -> None:
    sup.gate.set_smart_approver(lambda command, scope: "approve" if "build" in command else "deny")
    approved = sup.run(CMD, profile="s", context="cron")
    assert (
        approved.decision.outcome is Outcome.APPROVED
        and approved.decision.decided_by.value == "smart"
    )
    blocked = sup.run("rm -rf ./src", profile="s", context="cron")
    assert (
        blocked.decision.outcome is Outcome.BLOCKED and blocked.decision.decided_by.value == "smart"
    )
    assert "smart approver" in blocked.decision.message


def test_smart_errors_and_timeouts_escalate_with_a_warning(
    sup: Supervisor, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(command: str, scope: object) -> str:
        raise ValueError("model offline")

    def slow(command: str, scope: object) -> str:
        time.sleep(2)
        return "approve"

    caplog.set_level(logging.WARNING, logger="multiplex.approval.smart")
    for approver, text in ((broken, "raised ValueError"), (slow, "timed out after")):
        sup.gate.set_smart_approver(approver, timeout=0.2)
        result = sup.run(
            CMD, profile="s", context="cron"
        )  # escalated -> nobody can answer -> policy
        assert (
            result.decision.outcome is Outcome.BLOCKED
            and result.decision.cause == "unattended: cron"
        )
        assert any(text in r.getMessage() for r in caplog.records)
    assert any("after 0." in r.getMessage() for r in caplog.records)  # elapsed time is logged


def test_escalate_goes_to_a_human(sup: Supervisor) -> None:
    sup.gate.set_smart_approver(lambda command, scope: "escalate")
    result = sup.run(CMD, profile="s", context="api")  # nobody answers within 1 s
    assert result.decision.outcome is Outcome.TIMEOUT


def test_test_never_calls_the_approver(sup: Supervisor) -> None:
    calls: list[str] = []
    sup.gate.set_smart_approver(lambda command, scope: calls.append(command) or "approve")
    verdict = sup.test("s", CMD)
    assert verdict.outcome == "ask" and calls == []
    assert any(step.step == "smart" for step in verdict.trace)
