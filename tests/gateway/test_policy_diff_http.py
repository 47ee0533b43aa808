"""docs/allowlist.md#policy-diff over HTTP: ``POST /v1/policy/diff`` replays the profile's records.

Decisions are recorded by the real gateway's gate (runs submitted over HTTP);
the proposed config.yaml is sent as text and replayed exactly as
``multiplex policy diff`` and :func:`multiplex.supervision.policy_diff` do.
"""

from __future__ import annotations

import time

from multiplex.approval import read_decisions
from multiplex.supervision import policy_diff
from tests.gateway.conftest import Gateway

# alpha's own config with `echo ok *` denied and `printf *` no longer allowed.
PROPOSED = """\
terminal:
  cwd: .
  timeout: 20
command_allowlist: ["true", "false", "echo ok *"]
approvals:
  mode: strict
  timeout: 30
  deny: ["echo ok *"]
"""


def _record(gw: Gateway) -> None:
    api = gw.profile["alpha"]
    for commands in (["true"], ["echo ok one"], ["echo ok one"], ["printf x"]):
        api.wait(api.submit(commands, session_id="pd"), "completed")


def test_every_changed_command_with_its_count_as_the_cli_lists_it(gateway: Gateway) -> None:
    _record(gateway)
    answer = gateway.profile["alpha"].post(
        "/v1/policy/diff", json={"profile": "alpha", "proposed": PROPOSED}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["records"] == 4
    assert body["changes"] == [
        {
            "command": "echo ok one",
            "context": "api",
            "was": "approved",
            "would_be": "blocked",
            "cause": "deny rule: echo ok *",
            "count": 2,
        },
        {
            "command": "printf x",
            "context": "api",
            "was": "approved",
            "would_be": "ask",
            "cause": "a human must approve",
            "count": 1,
        },
    ]
    # The Python API on the same records and file says the same.
    proposed = gateway.root / "proposed.yaml"
    proposed.write_text(PROPOSED)
    rows = read_decisions({"alpha": gateway.homes["alpha"]}, limit=1000)
    direct = policy_diff("alpha", gateway.homes["alpha"], proposed, rows, gateway.sup.config)
    assert [c.as_dict() for c in direct] == body["changes"]
    # Nothing was written: the profile still approves what it approved.
    assert gateway.sup.test("alpha", "echo ok two").outcome == "approved"


def test_the_same_config_changes_nothing_and_since_keeps_later_records(gateway: Gateway) -> None:
    _record(gateway)
    api = gateway.admin
    same = (gateway.homes["alpha"] / "config.yaml").read_text()
    answer = api.post("/v1/policy/diff", json={"profile": "alpha", "proposed": same})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"changes": [], "records": 4}
    later = api.post(
        "/v1/policy/diff",
        json={"profile": "alpha", "proposed": PROPOSED, "since": time.time() + 60},
    )
    assert later.json() == {"changes": [], "records": 0}


def test_a_proposed_file_that_does_not_load_is_a_422_naming_the_key(gateway: Gateway) -> None:
    broken = PROPOSED.replace("mode: strict", "mode: strictt")
    answer = gateway.admin.post("/v1/policy/diff", json={"profile": "alpha", "proposed": broken})
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith("proposed") and "approvals.mode" in detail, detail
    assert "multiplex-policy-" not in detail  # the temporary file is not the caller's name
    not_yaml = gateway.admin.post(
        "/v1/policy/diff", json={"profile": "alpha", "proposed": "approvals: [unclosed"}
    )
    assert not_yaml.status_code == 422 and not_yaml.json()["detail"].startswith("proposed")


def test_another_profiles_history_is_not_visible(gateway: Gateway) -> None:
    _record(gateway)
    body = {"profile": "alpha", "proposed": PROPOSED}
    beta = gateway.profile["beta"].post("/v1/policy/diff", json=body)
    unknown = gateway.profile["beta"].post(
        "/v1/policy/diff", json={**body, "profile": "nobody-here"}
    )
    assert beta.status_code == unknown.status_code == 404
    assert beta.json()["detail"] == "no profile named 'alpha' is served"
    assert gateway.anonymous.post("/v1/policy/diff", json=body).status_code == 401
    wrong = gateway.admin.post("/v1/policy/diff", json={**body, "since": True})
    assert wrong.status_code == 422  # a boolean is not a time
