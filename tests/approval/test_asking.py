"""docs/approvals.md#outcomes-and-what-the-agent-sees and #sessions: every way an asked approval ends, truthfully, with real threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from multiplex import Outcome, Supervisor
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval
from multiplex.approval.waiting._prompt import CallbackPrompter, TerminalPrompter

DANGEROUS = "rm -rf ./scratch-dir"


@pytest.fixture
def sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  timeout: 30\n")
    make_home("q", "approvals:\n  timeout: 30\n")
    return supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")  # type: ignore[no-any-return]


def wait_open(sup: Supervisor, count: int = 1, profile: str = "p") -> list[PendingApproval]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        table = sup.gate.tables().get(profile)
        if table is not None and len(table.list_open()) >= count:
            return table.list_open()
        time.sleep(0.01)
    raise AssertionError("no approval request appeared")


def in_thread(fn: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(fn()))
    thread.start()
    return thread, box


def counted(sup: Supervisor, outcome: str, by: str, profile: str = "p") -> float:
    value = sup.metrics.registry.get_sample_value(
        "multiplex_approval_decisions_total",
        {"profile": profile, "outcome": outcome, "decided_by": by},
    )
    return value or 0.0


def assert_unanswered(sup: Supervisor, result: object, outcome: Outcome, cause: str) -> None:
    decision = result.decision  # type: ignore[attr-defined]
    assert decision.outcome is outcome, decision
    assert cause in decision.cause
    assert decision.decided_by.value == "nobody"
    assert result.exit_code is None  # type: ignore[attr-defined]  # the command did not run
    message = decision.message.lower()
    assert (
        "denied" not in message
        and "not answered" in message
        and "silence is not consent" in message
    )
    assert counted(sup, outcome.value, "nobody") >= 1


def test_answers_once_session_always_deny(sup: Supervisor, make_home) -> None:  # type: ignore[no-untyped-def]
    answers = iter(
        [
            Answer(Choice.ONCE),
            Answer(Choice.SESSION),
            Answer(Choice.ALWAYS),
            Answer(Choice.DENY, reason="not now"),
        ]
    )
    sup.gate.set_prompter(CallbackPrompter(lambda _r: next(answers)))
    run = lambda cmd: sup.run(cmd, profile="p", session="s", context="interactive")  # noqa: E731
    once = run(DANGEROUS)
    assert (
        once.decision.outcome is Outcome.APPROVED
        and once.decision.decided_by.value == "user"
        and once.exit_code == 0
    )
    session = run("rm -rf ./other")
    assert session.decision.outcome is Outcome.APPROVED
    again = run("rm -rf ./other")  # the session grant answers without asking
    assert again.decision.decided_by.value == "rule" and again.decision.rule == "rm -rf ./other"
    # docs/approvals.md#sessions: said to be the session's grant, never a config.yaml rule
    assert again.decision.cause == "session grant"
    assert sup.test("p", "rm -rf ./other", session="s").cause == "session grant"
    assert sup.test("p", "rm -rf ./other", session="other-session").outcome == "ask"
    assert list(sup.session_grants("p")) == ["s"]
    assert sup.revoke_grant("p", "s", "rm -rf ./other") is True
    assert sup.test("p", "rm -rf ./other", session="s").outcome == "ask"
    assert sup.revoke_grant("p", "s", "rm -rf ./other") is False
    assert sup.session_grants("p") == {}
    sup.gate.sessions(sup.profiles["p"]).grant("s", ["rm -rf ./other"])
    always = run("chmod -R 777 ./build")
    assert always.decision.outcome is Outcome.APPROVED
    assert "chmod -R 777 ./build" in sup.profiles["p"].allowlist.rules()
    assert "chmod -R 777 ./build" in (sup.profiles["p"].home / "config.yaml").read_text()
    denied = run("rm -rf ./third")
    assert denied.decision.outcome is Outcome.DENIED and denied.exit_code is None
    assert "the user denied" in denied.decision.message and "not now" in denied.decision.cause


def test_timeout(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("t", "approvals:\n  timeout: 1\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: t\n")
    result = sup.run(DANGEROUS, profile="t", context="api")
    assert result.decision.outcome is Outcome.TIMEOUT and result.decision.waited_ms >= 900
    assert (
        "not answered in time" in result.decision.message
        and "denied" not in result.decision.message
    )
    assert counted(sup, "timeout", "nobody", "t") == 1


def test_prompt_callback_raised(sup: Supervisor) -> None:
    def boom(_r: PendingApproval) -> str:
        raise RuntimeError("ui crashed")

    sup.gate.set_prompter(CallbackPrompter(boom))
    result = sup.run(DANGEROUS, profile="p", context="interactive")
    assert_unanswered(sup, result, Outcome.CANCELLED, "prompt callback raised RuntimeError")


def test_prompter_that_raises_on_delivery(sup: Supervisor) -> None:
    class Broken:
        def deliver(self, request: PendingApproval) -> None:
            raise OSError("no tty")

    sup.gate.set_prompter(Broken())
    assert_unanswered(
        sup,
        sup.run(DANGEROUS, profile="p", context="interactive"),
        Outcome.CANCELLED,
        "prompt callback raised OSError",
    )


def test_terminal_owned_by_another_prompt(sup: Supervisor) -> None:
    import os

    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd) as stdin, open(os.devnull, "w") as out:
        prompter = TerminalPrompter(stdin, out)
        sup.gate.set_prompter(prompter)
        first, box = in_thread(
            lambda: sup.run(DANGEROUS, profile="p", session="a", context="interactive")
        )
        wait_open(sup)
        second = sup.run("rm -rf ./elsewhere", profile="p", session="b", context="interactive")
        assert_unanswered(sup, second, Outcome.CANCELLED, "another prompt owns the terminal")
        os.write(write_fd, b"o\n")
        first.join(10)
        os.close(write_fd)
    assert box[0].decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]


def test_eof_on_the_terminal(sup: Supervisor) -> None:
    import io

    sup.gate.set_prompter(TerminalPrompter(io.StringIO(""), io.StringIO()))
    assert_unanswered(
        sup, sup.run(DANGEROUS, profile="p", context="interactive"), Outcome.CANCELLED, "EOF"
    )


def test_interrupt_on_the_terminal(sup: Supervisor) -> None:
    import io

    class Interrupting(io.StringIO):
        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            raise KeyboardInterrupt

    sup.gate.set_prompter(TerminalPrompter(Interrupting(), io.StringIO()))
    assert_unanswered(
        sup,
        sup.run(DANGEROUS, profile="p", context="interactive"),
        Outcome.CANCELLED,
        "interrupted",
    )


def _parked(sup: Supervisor, **kwargs: object) -> tuple[threading.Thread, list[object]]:
    thread, box = in_thread(lambda: sup.run(DANGEROUS, profile="p", context="api", **kwargs))  # type: ignore[arg-type]
    wait_open(sup)
    return thread, box


def test_turn_ended(sup: Supervisor) -> None:
    def turn() -> object:
        with sup.turn("p", context="api") as scope:
            threading.Timer(
                0.3, lambda: sup._turn_ended(scope)
            ).start()  # the turn's owner tears it down
            return sup.run(DANGEROUS)

    assert_unanswered(
        sup, turn(), Outcome.CANCELLED, "the turn ended before the prompt was answered"
    )


def test_session_reset(sup: Supervisor) -> None:
    thread, box = in_thread(lambda: sup.run(DANGEROUS, profile="p", session="s9", context="api"))
    wait_open(sup)
    assert sup.reset_session("p", "s9") == 1
    thread.join(10)
    assert_unanswered(sup, box[0], Outcome.CANCELLED, "session reset")


def test_parent_delegation_ended(sup: Supervisor) -> None:
    results: list[object] = []

    def child_work() -> None:
        with sup.turn("p", context="api"):
            results.append(sup.run(DANGEROUS))

    with sup.turn("p", context="api") as parent:
        child = threading.Thread(
            target=__import__("contextvars").copy_context().run, args=(child_work,)
        )
        child.start()
        wait_open(sup)
        sup.gate.cancel_turn(parent)  # the parent's turn ends while the child waits
        child.join(10)
    assert_unanswered(sup, results[0], Outcome.CANCELLED, "parent delegation ended")


def test_run_stopped_and_request_withdrawn(sup: Supervisor) -> None:
    thread, box = _parked(sup, run_id="run-1")
    assert sup.gate.cancel_run("run-1") == 1
    thread.join(10)
    assert_unanswered(sup, box[0], Outcome.CANCELLED, "run cancelled")
    thread, box = _parked(sup)
    wait_open(sup)[0].cancel("withdrawn by the approver UI")
    thread.join(10)
    assert_unanswered(sup, box[0], Outcome.CANCELLED, "withdrawn by the approver UI")


def test_identical_prompts_are_coalesced(sup: Supervisor) -> None:
    threads = [
        in_thread(lambda: sup.run(DANGEROUS, profile="p", session="c", context="api"))
        for _ in range(3)
    ]
    requests = wait_open(sup)
    time.sleep(0.2)
    assert len(sup.gate.tables()["p"].list_open()) == 1  # one prompt for three identical asks
    requests[0].answer(Answer(Choice.ONCE))
    for thread, box in threads:
        thread.join(10)
        assert box[0].decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]


def test_cancelled_leader_cancels_followers_with_the_same_cause(sup: Supervisor) -> None:
    threads = [
        in_thread(lambda: sup.run(DANGEROUS, profile="p", session="c", context="api"))
        for _ in range(3)
    ]
    wait_open(sup)
    time.sleep(0.2)
    sup.reset_session("p", "c")
    for thread, box in threads:
        thread.join(10)
        assert_unanswered(sup, box[0], Outcome.CANCELLED, "session reset")


def test_post_approval_response_hook(sup: Supervisor) -> None:
    seen: list[tuple[str, str]] = []
    sup.gate.recorder.post_approval_response.append(
        lambda d, *, choice, **_: seen.append((choice, d.outcome.value))
    )
    sup.gate.set_prompter(CallbackPrompter(lambda _r: "deny"))
    sup.run(DANGEROUS, profile="p", context="interactive")
    thread, _box = _parked(sup, run_id="r2")
    sup.gate.cancel_run("r2")
    thread.join(10)
    sup.run("ls", profile="p", context="api")  # not asked: no hook
    assert seen == [("deny", "denied"), ("cancelled", "cancelled")]


def test_decisions_log_is_redacted(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    import json

    home = make_home("r", "", env="API_TOKEN=super-secret-value-9876\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: r\n")
    sup.run("echo super-secret-value-9876", profile="r", context="cron")
    entries = [
        json.loads(line) for line in (home / "logs" / "decisions.jsonl").read_text().splitlines()
    ]
    assert entries and "super-secret-value-9876" not in json.dumps(entries)
    assert entries[-1]["outcome"] == "approved" and entries[-1]["profile"] == "r"


def test_protected_files_go_through_the_ask_path(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "w",
        "command_allowlist: ['tee *', 'cp *']\napprovals:\n  protected_files: [AGENTS.md, '*.pem']\n",
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: w\n")
    for line in (
        "echo hi > AGENTS.md",
        "tee AGENTS.md",
        "cp x ./keys/server.pem",
        "sed -i s/a/b/ AGENTS.md",
    ):
        verdict = sup.test("w", line)
        assert verdict.outcome == "ask", (line, verdict.trace)
    assert sup.test("w", "tee notes.md").outcome == "approved"
    result = sup.run("echo hi > AGENTS.md", profile="w", context="cron")
    assert (
        result.decision.outcome is Outcome.BLOCKED and result.decision.cause == "unattended: cron"
    )


def test_a_follower_withdrawn_alone_leaves_the_leader_open(sup: Supervisor) -> None:
    leader_thread, leader_box = in_thread(
        lambda: sup.run(DANGEROUS, profile="p", session="c", context="api", run_id="lead")
    )
    wait_open(sup)
    follower_thread, follower_box = in_thread(
        lambda: sup.run(DANGEROUS, profile="p", session="c", context="api", run_id="follow")
    )
    deadline = time.monotonic() + 10
    while len(sup.gate.tables()["p"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sup.gate.cancel_run("follow") == 1
    follower_thread.join(10)
    assert_unanswered(sup, follower_box[0], Outcome.CANCELLED, "run cancelled")
    (prompt,) = sup.gate.tables()["p"].list_open()
    prompt.answer(Answer(Choice.ONCE))
    leader_thread.join(10)
    assert leader_box[0].decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]
