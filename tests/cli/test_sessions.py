"""docs/approvals.md#sessions: session grants an operator can see, test against and take back.

Against a real ``multiplex up``: a grant answered "session" is listed by
``approvals sessions``, decides ``approvals test --session`` as the gate does in
that session, is recorded as a session grant (never as a config.yaml rule), and
``approvals revoke`` takes it back at once.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Up
from tests.gateway.conftest import Api

pytestmark = pytest.mark.slow

GRANTED = "rm -rf ./scratch-session-a"


def _verdict(up: Up, session: str | None, command: str = GRANTED) -> dict:  # type: ignore[type-arg]
    extra = ["--session", session] if session is not None else []
    result = up.cli("approvals", "test", "-p", "alpha", *extra, "--json", "--", command)
    assert result.returncode == 0, result.stderr
    verdict: dict = json.loads(result.stdout)  # type: ignore[type-arg]
    return verdict


def test_a_session_grant_is_listed_tested_recorded_and_revoked(up: Up) -> None:
    api = up.profile("alpha")
    run_id, pending = api.parked([GRANTED], session_id="grants-s1")
    assert api.answer(run_id, pending["approval_id"], "session").status_code == 200
    api.wait(run_id, "completed")
    again = api.submit([GRANTED], session_id="grants-s1")
    decision = api.wait(again, "completed")["results"][0]["decision"]
    # Approved by the grant, and said so: no rule of that text is in config.yaml.
    assert decision["outcome"] == "approved" and decision["cause"] == "session grant"
    assert decision["rule"] == GRANTED and decision["decided_by"] == "rule"
    assert GRANTED not in (up.root / "profiles/alpha/config.yaml").read_text()
    records = (up.root / "profiles/alpha/logs/decisions.jsonl").read_text().splitlines()
    last = json.loads(records[-1])
    assert (last["session"], last["cause"], last["rule"]) == ("grants-s1", "session grant", GRANTED)

    listed = up.cli("approvals", "sessions", "-p", "alpha", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [r for r in json.loads(listed.stdout) if r["session_id"] == "grants-s1"]
    assert [{k: v for k, v in r.items() if k != "schema_version"} for r in rows] == [
        {"profile": "alpha", "session_id": "grants-s1", "grants": [GRANTED], "yolo": False}
    ]
    table = up.cli("approvals", "sessions", env={"COLUMNS": "200"})
    assert "grants-s1" in table.stdout and GRANTED in table.stdout

    # The gate's verdict in that session, and in another (no grant there).
    assert _verdict(up, "grants-s1")["cause"] == "session grant"
    assert _verdict(up, "grants-s1")["outcome"] == "approved"
    assert _verdict(up, "grants-other")["outcome"] == "ask"
    assert _verdict(up, None)["outcome"] == "ask"  # the local config holds no session

    revoked = up.cli("approvals", "revoke", "-p", "alpha", "--session", "grants-s1", GRANTED)
    assert revoked.returncode == 0, revoked.stderr
    assert _verdict(up, "grants-s1")["outcome"] == "ask"  # at once
    # A command of the session asks again: the grant is gone from the gate itself.
    run_id, pending = api.parked([GRANTED], session_id="grants-s1")
    assert pending["command"] == GRANTED
    api.answer(run_id, pending["approval_id"], "deny")
    twice = up.cli("approvals", "revoke", "-p", "alpha", "--session", "grants-s1", GRANTED)
    assert twice.returncode == 2 and "held no" in twice.stderr


def test_revoking_every_grant_and_yolo_and_who_may_see_them(up: Up) -> None:
    api = up.profile("alpha")
    for command in ("rm -rf ./scratch-b1", "rm -rf ./scratch-b2"):
        run_id, pending = api.parked([command], session_id="grants-s2")
        api.answer(run_id, pending["approval_id"], "session")
        api.wait(run_id, "completed")
    rows = api.get("/v1/sessions").json()
    mine = [r for r in rows if r["session_id"] == "grants-s2"]
    assert mine[0]["grants"] == ["rm -rf ./scratch-b1", "rm -rf ./scratch-b2"]
    # Another profile's token sees none of alpha's sessions and cannot revoke them.
    beta = up.profile("beta")
    assert all(r["profile"] == "beta" for r in beta.get("/v1/sessions").json())
    assert beta.get("/v1/sessions", params={"profile": "alpha"}).status_code == 404
    assert beta.post("/v1/sessions/alpha/grants-s2/revoke", json={}).status_code == 404
    assert Api(up.url, None).get("/v1/sessions").status_code == 401
    # A rule field that is not a string is refused, nothing revoked.
    assert api.post("/v1/sessions/alpha/grants-s2/revoke", json={"rule": 1}).status_code == 422
    everything = up.cli("approvals", "revoke", "-p", "alpha", "--session", "grants-s2")
    assert everything.returncode == 0, everything.stderr
    left = [r for r in api.get("/v1/sessions").json() if r["session_id"] == "grants-s2"]
    assert left == []
    body = {"profile": "alpha", "command": "rm -rf ./scratch-b1", "session_id": "grants-s2"}
    assert api.post("/v1/approvals/test", json=body).json()["outcome"] == "ask"
