"""docs/allowlist.md#grants and docs/approvals.md#suggestions over real HTTP, as an operator uses them."""

from __future__ import annotations

import hashlib
import time

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


def test_a_grant_with_one_use_approves_one_run_then_parks_and_an_expired_one_parks(
    gateway: Gateway,
) -> None:
    api = gateway.profile["alpha"]
    profile = gateway.sup.profiles["alpha"]
    config = gateway.homes["alpha"] / "config.yaml"
    text = config.read_text()
    # A hand edit with the mapping form; the watcher picks it up.
    config.write_text(
        text.replace(
            'command_allowlist: ["true", "false", "echo ok *", "printf *"]',
            "command_allowlist:\n"
            "  - 'true'\n"
            "  - {rule: 'echo once *', uses: 1}   # one run\n"
            "  - {rule: 'echo late *', expires: '2020-01-01T00:00:00Z'}\n",
        )
    )
    deadline = time.monotonic() + 15
    while not any(g.rule == "echo once *" for g in profile.allowlist.grants()):
        assert time.monotonic() < deadline, "the watcher never reloaded the hand edit"
        time.sleep(0.01)
    first = api.wait(api.submit(["echo once a"]))
    assert first["results"][0]["decision"]["cause"] == "allowlisted"
    assert "{rule: 'echo once *', uses: 0}" in config.read_text()
    # Its last use is told as a hand revocation is (docs/allowlist.md#when-a-grant-ends).
    spent = 'multiplex_grants_ended_total{profile="alpha",reason="spent"} 1.0'
    assert spent in gateway.admin.get("/metrics").text
    second, pending = api.parked(["echo once b"])
    assert pending["step"] == "detection"  # strict: not allowlisted any more, so it asks
    api.post(f"/v1/runs/{second}/cancel")
    late, _ = api.parked(["echo late c"])
    api.post(f"/v1/runs/{late}/cancel")
