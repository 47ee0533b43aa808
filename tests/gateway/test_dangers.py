"""Every danger named over HTTP (docs/gateway.md, docs/approvals.md#what-a-prompt-shows):
``POST /v1/approvals/test``, a parked run's ``pending_approval``, ``GET /v1/approvals``,
``GET /v1/decisions`` and the OpenAPI schema, on a real gateway."""

from __future__ import annotations

from tests.gateway.conftest import Gateway

LINE = "cat ~/.aws/credentials && rm -rf ./build && python -c \"import os; os.system('ls')\""
DANGERS = [
    {"pattern": "secret-read", "segment": "cat ~/.aws/credentials"},
    {"pattern": "recursive-delete", "segment": "rm -rf ./build"},
    {"pattern": "script-exec", "segment": "import os; os.system('ls')"},
]


def test_the_test_route_lists_every_danger(gateway: Gateway) -> None:
    r = gateway.admin.post("/v1/approvals/test", json={"profile": "alpha", "command": LINE})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["outcome"] == "ask" and body["dangers"] == DANGERS
    clean = gateway.admin.post("/v1/approvals/test", json={"profile": "alpha", "command": "true"})
    assert clean.json()["dangers"] == []


def test_a_pending_approval_lists_every_danger_and_the_record_keeps_them(
    gateway: Gateway,
) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked([LINE], profile="alpha", session_id="s1", context="api")
    assert pending["dangers"] == DANGERS
    assert [p["name"] for p in pending["patterns"]] == [d["pattern"] for d in DANGERS]
    listed = [a for a in api.get("/v1/approvals").json() if a["run_id"] == run_id]
    assert listed and listed[0]["dangers"] == DANGERS
    assert api.answer(run_id, pending["approval_id"], "deny").status_code == 200
    api.wait(run_id)
    rows = api.get("/v1/decisions", params={"profile": "alpha"}).json()
    mine = [row for row in rows if row["command"] == LINE]
    assert mine and mine[0]["dangers"] == DANGERS


def test_the_openapi_schema_describes_dangers(gateway: Gateway) -> None:
    schema = gateway.admin.get("/openapi.json").json()
    models = schema["components"]["schemas"]
    assert set(models["DangerOut"]["properties"]) == {"pattern", "segment"}
    for name in ("VerdictOut", "ApprovalOut", "PendingOut", "DecisionRow"):
        assert "dangers" in models[name]["properties"], name
