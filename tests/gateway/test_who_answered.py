"""docs/approvals.md#who-answered: every record says who answered; self_approve; copies redacted."""

from __future__ import annotations

import io
import json
from pathlib import Path

from multiplex import Supervisor
from multiplex.approval.records._records import ANSWERED_BY
from multiplex.approval.waiting._prompt import TerminalPrompter
from tests.gateway.conftest import TOKENS, Gateway, SseReader


def _records(home: Path) -> list[dict[str, object]]:
    lines = (home / "logs/decisions.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def _last_for(home: Path, command: str) -> dict[str, object]:
    return [r for r in _records(home) if r["command"] == command][-1]


def test_each_way_of_deciding_records_who_answered(gateway: Gateway) -> None:
    alpha, home = gateway.profile["alpha"], gateway.homes["alpha"]
    run_id, pending = alpha.parked(["echo by-admin"])
    assert gateway.admin.answer(run_id, pending["approval_id"], "once").status_code == 200
    alpha.wait(run_id)
    run_id, pending = alpha.parked(["echo by-own-token"])
    assert alpha.answer(run_id, pending["approval_id"], "once").status_code == 200
    alpha.wait(run_id)
    alpha.wait(alpha.submit(["true"]))  # allowlisted
    run_id, _ = alpha.parked(["echo nobody-answers"])
    alpha.post(f"/v1/runs/{run_id}/cancel")
    alpha.wait(run_id)
    gateway.sup.run("echo unattended", profile="alpha", context="cron")
    assert _last_for(home, "echo by-admin")["answered_by"] == "admin"
    assert _last_for(home, "echo by-own-token")["answered_by"] == "profile-token"
    assert _last_for(home, "true")["answered_by"] == "rule"
    assert _last_for(home, "echo nobody-answers")["answered_by"] == "nobody"
    assert _last_for(home, "echo unattended")["answered_by"] == "policy"
    assert all(r["answered_by"] in ANSWERED_BY for r in _records(home))


def test_the_terminal_is_recorded_as_terminal(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", "approvals:\n  mode: strict\n")
    sup: Supervisor = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    sup.gate.set_prompter(TerminalPrompter(io.StringIO("o\n"), io.StringIO()))
    result = sup.run("echo at-the-terminal", profile="p", context="interactive")
    assert result.exit_code == 0
    assert _last_for(home, "echo at-the-terminal")["answered_by"] == "terminal"


def test_self_approve_false_refuses_the_profiles_own_token(gateway: Gateway) -> None:
    home = gateway.homes["alpha"]
    config = home / "config.yaml"
    config.write_text(
        config.read_text().replace("mode: strict", "mode: strict\n  self_approve: false")
    )
    assert gateway.sup.reload("alpha").result == "ok"
    alpha = gateway.profile["alpha"]
    run_id, pending = alpha.parked(["echo needs-the-admin"])
    for choice in ("once", "deny"):
        refused = alpha.answer(run_id, pending["approval_id"], choice)
        assert refused.status_code == 403 and "self_approve" in refused.text
    assert alpha.run(run_id)["status"] == "waiting_for_approval"
    assert gateway.admin.answer(run_id, pending["approval_id"], "once").status_code == 200
    assert alpha.wait(run_id)["status"] == "completed"
    assert _last_for(home, "echo needs-the-admin")["answered_by"] == "admin"


def test_self_approve_defaults_to_true(gateway: Gateway) -> None:
    beta = gateway.profile["beta"]
    run_id, pending = beta.parked(["echo own-answer"])
    assert beta.answer(run_id, pending["approval_id"], "once").status_code == 200


def test_results_and_sse_events_redact_the_command(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    secret, other = TOKENS["alpha"], TOKENS["beta"]  # alpha's own secret, and beta's
    command = f"echo ok {secret} {other}"  # allowlisted by "echo ok *": it runs at once
    with alpha.client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        run_id = alpha.submit([command])
        events.until(lambda n, d: n == "run.finished" and d["run_id"] == run_id)
    document = alpha.wait(run_id)
    text = json.dumps(document) + json.dumps(events.seen)
    assert secret not in text and other not in text
    assert document["results"][0]["command"].startswith("echo ok [REDACTED")
    finished = [d for n, d in events.seen if n == "command.finished"]
    assert finished and finished[0]["command"] == document["results"][0]["command"]
    decisions = gateway.admin.get("/v1/decisions")
    if decisions.status_code == 200:
        assert secret not in decisions.text
