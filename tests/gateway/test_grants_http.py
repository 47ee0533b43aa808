"""docs/allowlist.md#grants and docs/approvals.md#suggestions over real HTTP, as an operator uses them."""

from __future__ import annotations

import hashlib

from tests.gateway.conftest import Gateway


def test_a_bound_script_edited_after_the_grant_parks_the_run_with_the_cause(
    gateway: Gateway,
) -> None:
    api = gateway.profile["alpha"]
    workspace = gateway.homes["alpha"] / "workspace"
    workspace.mkdir(exist_ok=True)
    script = workspace / "build.sh"
    script.write_text("echo built\n")
    digest = "sha256:" + hashlib.sha256(script.read_bytes()).hexdigest()
    gateway.sup.profiles["alpha"].allowlist.grant("sh build.sh", bind={"build.sh": digest})
    done = api.wait(api.submit(["sh build.sh"]))
    assert done["results"][0]["decision"]["outcome"] == "approved"
    assert done["results"][0]["stdout"] == "built\n"
    script.write_text("echo pwned\n")  # what an agent would do after the grant
    run_id, pending = api.parked(["sh build.sh"])
    assert pending["step"] == "allowlist"
    assert pending["reason"] == "build.sh changed since it was allowed"
    api.post(f"/v1/runs/{run_id}/cancel")


def test_approval_rows_carry_suggestions_and_always_may_save_one(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo deploy:staging now"])
    rows = api.get("/v1/approvals", params={"state": "open"}).json()
    offered = [(s["rule"], s["saves"]) for s in rows[0]["suggestions"]]
    assert offered == [
        ("echo deploy:staging now", True),
        ("echo deploy:staging *", False),
        ("echo deploy:* *", False),
    ]
    assert pending["suggestions"] == rows[0]["suggestions"]  # the run's pending_approval too
    refused = api.answer(run_id, pending["approval_id"], "always", rule="echo *")
    assert refused.status_code == 422, refused.text  # not one it offered
    saved = api.answer(run_id, pending["approval_id"], "always", rule="echo deploy:* *")
    assert saved.status_code == 200, saved.text
    assert api.wait(run_id)["status"] == "completed"
    assert "echo deploy:* *" in gateway.sup.profiles["alpha"].allowlist.rules()
    text = (gateway.homes["alpha"] / "config.yaml").read_text()
    assert "echo deploy:* *" in text
    again = api.wait(api.submit(["echo deploy:prod later"]))
    assert again["results"][0]["decision"]["cause"] == "allowlisted"
