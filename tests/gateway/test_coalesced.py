"""Identical prompts of two runs in one session are one prompt (docs/approvals.md#outcomes-and-what-the-agent-sees coalescing)."""

from __future__ import annotations

from tests.gateway.conftest import Gateway


def test_two_runs_share_one_prompt_and_one_answer(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    first, pending = api.parked(["echo coalesced"], session_id="s-co")
    second, joined = api.parked(["echo coalesced"], session_id="s-co")
    assert joined["approval_id"] == pending["approval_id"]  # the same prompt
    listed = api.get("/v1/approvals", params={"state": "open"}).json()
    assert [a["approval_id"] for a in listed] == [pending["approval_id"]]
    # Answered through the second run, it settles both.
    assert api.answer(second, pending["approval_id"], "once").json() == {"ok": True}
    for run_id in (first, second):
        run = api.wait(run_id)
        assert run["status"] == "completed", (run["error"], run["results"])
        assert run["results"][0]["decision"]["outcome"] == "approved"


def test_cancelling_the_follower_run_leaves_the_leader_waiting(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    first, pending = api.parked(["echo coalesced-2"], session_id="s-co2")
    second, _ = api.parked(["echo coalesced-2"], session_id="s-co2")
    api.post(f"/v1/runs/{second}/cancel")
    cancelled = api.wait(second)
    assert cancelled["status"] == "cancelled"
    assert cancelled["results"][0]["decision"]["cause"] == "run cancelled"
    assert api.run(first)["status"] == "waiting_for_approval"
    assert api.answer(first, pending["approval_id"], "deny").json() == {"ok": True}
    denied = api.wait(first)
    assert denied["results"][0]["decision"]["outcome"] == "denied"
