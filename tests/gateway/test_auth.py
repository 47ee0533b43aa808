"""Who sees what: admin, profile tokens, no token (docs/gateway.md).

Another profile's run, approval, session or settings answers 404 — exactly
what an unknown one answers — never 403.
"""

from __future__ import annotations

import pytest

from tests.gateway.conftest import ADMIN, TOKENS, Api, Gateway

ENDPOINTS = [
    ("GET", "/v1/runs/run-x"),
    ("POST", "/v1/runs"),
    ("GET", "/v1/approvals"),
    ("GET", "/v1/profiles"),
    ("GET", "/v1/profiles/alpha"),
    ("GET", "/v1/decisions"),
    ("GET", "/v1/whoami"),
    ("GET", "/v1/events"),
    ("POST", "/v1/approvals/test"),
    ("POST", "/v1/sessions/alpha/s/reset"),
    ("GET", "/metrics"),
]


@pytest.mark.parametrize(
    "token", [None, "", "wrong-token", ADMIN + "x", ADMIN[:-1], "broken-token-xyz"]
)
def test_missing_or_bad_tokens_get_401(gateway: Gateway, token: str | None) -> None:
    api = gateway.as_token(token)
    for method, path in ENDPOINTS:
        r = api.request(method, path, json={})
        assert r.status_code == 401, (method, path, r.status_code)
        assert r.headers["www-authenticate"] == "Bearer"


def test_a_non_bearer_scheme_is_refused(gateway: Gateway) -> None:
    r = gateway.anonymous.get("/v1/whoami", headers={"Authorization": f"Basic {ADMIN}"})
    assert r.status_code == 401


def test_whoami_names_the_role(gateway: Gateway) -> None:
    assert gateway.admin.get("/v1/whoami").json() == {"role": "admin", "profile": None}
    for name in TOKENS:
        assert gateway.profile[name].get("/v1/whoami").json() == {
            "role": "profile",
            "profile": name,
        }


def test_profiles_cannot_see_or_touch_each_others_runs(gateway: Gateway) -> None:
    alpha, beta, admin = gateway.profile["alpha"], gateway.profile["beta"], gateway.admin
    a_run, a_pending = alpha.parked(["echo alpha-secret-work"], session_id="sa")
    b_run, b_pending = beta.parked(["echo beta-work"], session_id="sb")

    # Runs, their events, approvals and cancels: 404 across profiles, as if unknown.
    for api, run_id, pending in ((beta, a_run, a_pending), (alpha, b_run, b_pending)):
        unknown = api.get("/v1/runs/run-unknown").json()
        r = api.get(f"/v1/runs/{run_id}")
        assert r.status_code == 404
        assert r.json()["detail"] == unknown["detail"].replace("run-unknown", run_id)
        assert api.get(f"/v1/runs/{run_id}/events").status_code == 404
        assert api.answer(run_id, pending["approval_id"], "once").status_code == 404
        assert api.post(f"/v1/runs/{run_id}/cancel").status_code == 404

    # Each lists only its own open approval; the admin lists both.
    assert [a["run_id"] for a in alpha.get("/v1/approvals").json()] == [a_run]
    assert [a["run_id"] for a in beta.get("/v1/approvals").json()] == [b_run]
    assert {a["run_id"] for a in admin.get("/v1/approvals").json()} == {a_run, b_run}

    # Sessions of another profile cannot be reset (and nothing was cancelled).
    assert beta.post("/v1/sessions/alpha/sa/reset").status_code == 404
    assert alpha.run(a_run)["status"] == "waiting_for_approval"

    # Nor can a run be started in another profile, by name or by route.
    assert beta.post("/v1/runs", json={"profile": "alpha", "commands": ["true"]}).status_code == 404
    routed = {"route": {"platform": "telegram", "chat_id": "42"}, "commands": ["true"]}
    assert alpha.post("/v1/runs", json=routed).status_code == 404
    # The refusal reads exactly like a profile that does not exist.
    other = beta.post("/v1/runs", json={"profile": "alpha", "commands": ["true"]}).json()
    ghost = beta.post("/v1/runs", json={"profile": "ghost", "commands": ["true"]}).json()
    assert other["detail"] == ghost["detail"].replace("ghost", "alpha")

    # The admin sees and answers both.
    assert admin.run(a_run)["profile"] == "alpha" and admin.run(b_run)["profile"] == "beta"
    assert admin.answer(a_run, a_pending["approval_id"], "once").status_code == 200
    assert admin.answer(b_run, b_pending["approval_id"], "deny").status_code == 200
    assert admin.wait(a_run)["status"] == "completed"
    assert admin.wait(b_run)["status"] == "failed"
    # And a profile answers its own.
    c_run, c_pending = beta.parked(["echo beta-own"])
    assert beta.answer(c_run, c_pending["approval_id"], "once").status_code == 200
    assert beta.wait(c_run)["status"] == "completed"


def test_profile_reads_are_limited_to_the_own_profile(gateway: Gateway) -> None:
    alpha, admin = gateway.profile["alpha"], gateway.admin
    assert [p["name"] for p in alpha.get("/v1/profiles").json()] == ["alpha"]
    assert alpha.get("/v1/profiles/beta").status_code == 404
    assert alpha.get("/v1/profiles/beta").json() == {
        "detail": alpha.get("/v1/profiles/ghost").json()["detail"].replace("ghost", "beta")
    }
    assert {p["name"] for p in admin.get("/v1/profiles").json()} == {
        "alpha",
        "beta",
        "gamma",
        "broken",
    }
    body = {"profile": "beta", "command": "true"}
    assert alpha.post("/v1/approvals/test", json=body).status_code == 404
    assert admin.post("/v1/approvals/test", json=body).status_code == 200

    gateway.profile["beta"].wait(gateway.profile["beta"].submit(["true"]))
    alpha.wait(alpha.submit(["true"]))
    assert {d["profile"] for d in alpha.get("/v1/decisions").json()} == {"alpha"}
    assert {d["profile"] for d in admin.get("/v1/decisions").json()} == {"alpha", "beta"}


def test_the_live_stream_carries_only_the_tokens_profile(gateway: Gateway) -> None:
    from tests.gateway.conftest import SseReader

    alpha, beta = gateway.profile["alpha"], gateway.profile["beta"]
    b_run, _ = beta.parked(["echo beta-hidden"])
    with alpha.client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        beta.post(f"/v1/runs/{b_run}/cancel")
        a_run = alpha.submit(["echo alpha-visible"])
        events.until(lambda n, d: n == "approval.request" and d["run_id"] == a_run)
        alpha.post(f"/v1/runs/{a_run}/cancel")
        events.until(lambda n, d: n == "run.finished" and d["run_id"] == a_run)
    assert {data["profile"] for _name, data in events.seen} == {"alpha"}


def test_a_reloaded_env_replaces_the_profile_token(gateway: Gateway) -> None:
    env = gateway.homes["alpha"] / ".env"
    env.write_text("MULTIPLEX_TOKEN=alpha-rotated-token-9999\n")
    gateway.sup.reload("alpha")
    assert gateway.profile["alpha"].get("/v1/whoami").status_code == 401
    rotated = gateway.as_token("alpha-rotated-token-9999").get("/v1/whoami")
    assert rotated.json() == {"role": "profile", "profile": "alpha"}


def test_two_profiles_sharing_a_token_get_neither(gateway: Gateway) -> None:
    (gateway.homes["gamma"] / ".env").write_text(f"MULTIPLEX_TOKEN={TOKENS['beta']}\n")
    gateway.sup.reload("gamma")
    assert gateway.profile["beta"].get("/v1/whoami").status_code == 401
    assert gateway.admin.get("/v1/whoami").status_code == 200


def test_health_needs_no_token(gateway: Gateway) -> None:
    anon: Api = gateway.anonymous
    assert anon.get("/healthz").status_code == 200
    assert anon.get("/readyz").status_code == 200
    assert anon.get("/").status_code == 200
