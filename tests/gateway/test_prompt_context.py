"""An approval request says who asked, when, in what context, the sandbox and network it
would run under, and why in an operator's words (docs/approvals.md#what-a-prompt-shows).

Real gateway over real HTTP: the fields are the same in ``GET /v1/approvals``, the run's
``pending_approval`` and the ``approval.request`` event.
"""

from __future__ import annotations

import time
from typing import Any

from multiplex.execution import sandbox_of
from tests.gateway.conftest import Api, Gateway, SseReader

CONTEXT_FIELDS = (
    "context",
    "asked_by",
    "created_at",
    "because",
    "sandbox",
    "network",
    "egress_allow",
)


def _asked(api: Api, command: str, session: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Submit ``command`` and read its approval.request event and its pending_approval."""
    with api.client(timeout=30) as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        before = time.time()
        run_id = api.submit([command], session_id=session)
        _, event = events.until(
            lambda name, d: name == "approval.request" and d.get("run_id") == run_id
        )
    pending = api.wait(run_id, "waiting_for_approval")["pending_approval"]
    assert before - 1 <= pending["created_at"] <= time.time()
    return run_id, event, pending


def test_the_request_names_who_asked_where_it_runs_and_why(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    run_id, event, pending = _asked(alpha, "rm -rf ./scratch-dir", "s-ctx")
    [row] = [a for a in alpha.get("/v1/approvals").json() if a["run_id"] == run_id]
    effective = sandbox_of("local", "auto")[0]
    for doc in (event, pending, row):
        assert doc["context"] == "api"
        assert doc["asked_by"] == "the alpha profile's token"
        assert doc["sandbox"] == effective and doc["sandbox"] in ("bwrap", "none")
        assert doc["network"] == "on" and doc["egress_allow"] == []
        # Words an operator reads, not the name of the gate's step.
        assert doc["because"].startswith("recursive-delete: ")
        assert doc["because"] == ("recursive-delete: " + doc["patterns"][0]["description"]), doc
    assert {k: event[k] for k in CONTEXT_FIELDS} == {k: row[k] for k in CONTEXT_FIELDS}
    assert {k: pending[k] for k in CONTEXT_FIELDS} == {k: row[k] for k in CONTEXT_FIELDS}


def test_the_admin_token_and_strict_mode_read_as_words(gateway: Gateway) -> None:
    admin = gateway.admin
    # alpha is mode: strict; "echo parked" is harmless and not on its allowlist.
    run_id, event, pending = _asked(admin, "echo parked", "s-strict")
    assert event["asked_by"] == pending["asked_by"] == "the admin token"
    assert event["because"] == "strict mode: the command is not on the allowlist"
    assert pending["because"] == event["because"]
    assert event["step"] == "detection"  # the gate's own name stays for programs
    admin.post(f"/v1/runs/{run_id}/cancel")
