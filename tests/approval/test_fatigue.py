"""docs/approvals.md#fatigue: how often people are asked and how they answer, live and from the records."""

from __future__ import annotations

import json
import threading
import time

from multiplex import Supervisor
from multiplex.approval.waiting._pending import Answer, Choice
from multiplex.approval.waiting._prompt import CallbackPrompter
from tests.conftest import run_cli


def _sample(sup: Supervisor, name: str, **labels: str) -> float:
    assert sup.metrics.registry is not None
    return sup.metrics.registry.get_sample_value(name, labels) or 0.0


def test_prompts_answers_and_rubber_stamping_are_counted_and_summarised(
    make_home, supervisor_of, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  timeout: 30\n")
    make_home("quiet", "")
    sup = supervisor_of("profiles_dir: profiles\n")
    answers = iter([(0.0, Choice.ONCE), (0.0, Choice.DENY), (2.3, Choice.ONCE)])

    def answer(_request: object) -> Answer:
        delay, choice = next(answers)
        time.sleep(delay)  # the third is read for longer than FAST_ANSWER_S
        return Answer(choice)

    sup.gate.set_prompter(CallbackPrompter(answer))
    for command in ("rm -rf ./a", "rm -rf ./b", "rm -rf ./c"):
        sup.run(command, profile="p", session="s", context="interactive")
    # One prompt nobody answers (an api turn): withdrawn by a session reset.
    waiting = threading.Thread(
        target=lambda: sup.run("rm -rf ./d", profile="p", session="w", context="api")
    )
    waiting.start()
    deadline = time.monotonic() + 10
    while not sup.gate.pending(sup.profiles["p"]).list_open() and time.monotonic() < deadline:
        time.sleep(0.01)
    sup.reset_session("p", "w")
    waiting.join(10)

    assert _sample(sup, "multiplex_approval_prompts_total", profile="p") == 4
    assert _sample(sup, "multiplex_approval_answers_total", profile="p", answer="approved") == 2
    assert _sample(sup, "multiplex_approval_answers_total", profile="p", answer="denied") == 1
    assert _sample(sup, "multiplex_approval_fast_answers_total", profile="p") == 2
    assert _sample(sup, "multiplex_approval_answer_seconds_count", profile="p") == 3

    result = run_cli("decisions", "--summary", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {r["profile"]: r for r in json.loads(result.stdout)}
    p = rows["p"]
    assert (p["prompts"], p["answered"], p["approved"], p["unanswered"]) == (4, 3, 2, 1)
    assert p["fast_answers"] == 2 and p["approved_share"] == round(2 / 3, 3)
    assert p["median_answer_s"] is not None and p["median_answer_s"] < 2
    assert p["prompts_per_hour"] > 0
    assert rows["quiet"]["prompts"] == 0 and rows["quiet"]["approved_share"] is None
    table = run_cli("decisions", "--summary", cwd=tmp_path, env={"COLUMNS": "200"})
    assert table.returncode == 0 and "67% of 3" in table.stdout
    later = run_cli("decisions", "--summary", "--json", "--since", "2099-01-01", cwd=tmp_path)
    assert json.loads(later.stdout)[0]["prompts"] == 0
    mixed = run_cli("decisions", "--summary", "--follow", cwd=tmp_path)
    assert mixed.returncode == 2 and "--summary" in mixed.stderr
