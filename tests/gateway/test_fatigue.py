"""docs/approvals.md#fatigue over HTTP and on the dashboard: prompts per hour, share approved, fast answers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.test_dashboard import (  # noqa: F401  (fixtures)
    ADMIN_TOKEN,
    BETA_TOKEN,
    Gateway,
    browser,
    expect,
    gateway,
    page,
    sign_in,
    submit,
    wait_status,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _answer(gw: Gateway, run_id: str, choice: str) -> None:
    run = wait_status(gw, run_id, "waiting_for_approval")
    body = {"approval_id": run["pending_approval"]["approval_id"], "choice": choice}
    with gw.client() as http:
        assert http.post(f"/v1/runs/{run_id}/approval", json=body).status_code == 200


def test_the_summary_per_profile_and_on_the_dashboard(gateway: Gateway, page: Any) -> None:  # noqa: F811
    for command, choice in (("rm -rf scratch/a", "once"), ("rm -rf scratch/b", "deny")):
        run_id = submit(gateway, "alpha", command)
        _answer(gateway, run_id, choice)
        wait_status(gateway, run_id, "completed", "failed")
    with gateway.client() as http:
        rows = http.get("/v1/decisions/summary").json()
        alpha = next(r for r in rows if r["profile"] == "alpha")
        assert (alpha["prompts"], alpha["answered"], alpha["approved"]) == (2, 2, 1)
        assert alpha["approved_share"] == 0.5 and alpha["fast_answers"] == 2
        assert next(r for r in rows if r["profile"] == "beta")["prompts"] == 0
        only = http.get("/v1/decisions/summary", params={"profile": ["beta"]}).json()
        assert [r["profile"] for r in only] == ["beta"]
        later = http.get("/v1/decisions/summary", params={"since": 4e9}).json()
        assert all(r["prompts"] == 0 for r in later)
        metrics = http.get("/metrics").text
        assert 'multiplex_approval_prompts_total{profile="alpha"} 2.0' in metrics
        assert 'multiplex_approval_fast_answers_total{profile="alpha"} 2.0' in metrics
    # Another profile's token sees only its own figures.
    with gateway.client(BETA_TOKEN) as http:
        assert [r["profile"] for r in http.get("/v1/decisions/summary").json()] == ["beta"]

    sign_in(page, gateway, ADMIN_TOKEN)
    cell = page.locator('[data-fatigue-of="alpha"]')
    expect(cell).to_contain_text("50% approved")
    expect(cell).to_contain_text("2 under 2 s")
    expect(page.locator('[data-fatigue-of="beta"]')).to_have_text("no prompts")
    assert page.errors == []
