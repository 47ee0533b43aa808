"""The HTTP gateway's runs, approvals, events and health over real HTTP (docs/gateway.md)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.gateway.conftest import ADMIN, Api, Gateway, SseReader, make_homes

# -- runs ----------------------------------------------------------------------------


def test_allowlisted_commands_complete_with_their_output(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id = api.submit(["true", "echo ok hello", "false"], session_id="s1")
    run = api.wait(run_id)
    # docs/gateway.md: completed = every command approved and ran, whatever its exit code.
    assert run["status"] == "completed"
    assert [r["exit_code"] for r in run["results"]] == [0, 0, 1]
    assert run["results"][1]["stdout"] == "ok hello\n"
    assert all(r["decision"]["outcome"] == "approved" for r in run["results"])
    assert run["results"][0]["decision"]["decided_by"] == "rule"
    assert run["pending_approval"] is None
    assert run["finished_at"] >= run["created_at"]
    assert (run["profile"], run["session_id"], run["context"]) == ("alpha", "s1", "api")


def test_output_cut_at_its_cap_says_truncated(gateway: Gateway) -> None:
    # docs/execution.md: 1 MiB a stream; the API used to return exactly 1 MiB and no flag.
    api = gateway.profile["alpha"]
    run = api.wait(api.submit(["printf %01100000d 0", "printf small"]), timeout=30)
    big, small = run["results"]
    assert big["truncated"] is True and big["timed_out"] is False
    assert small["truncated"] is False and small["stdout"] == "small"


def test_a_run_without_profile_goes_to_the_default_and_routes_pick_profiles(
    gateway: Gateway,
) -> None:
    admin = gateway.admin
    assert admin.run(admin.submit(["true"]))["profile"] == "alpha"
    routed = admin.submit(["true"], route={"platform": "telegram", "chat_id": 42})
    assert admin.wait(routed)["profile"] == "beta"


def test_a_parked_run_is_answered_once_and_asks_again_next_time(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo parked", "echo ok after"], session_id="s-once")
    assert pending["command"] == "echo parked"
    assert pending["expires_at"] > pending["created_at"]
    listed = api.get("/v1/approvals", params={"state": "open"}).json()
    assert [a["approval_id"] for a in listed] == [pending["approval_id"]]
    assert listed[0]["run_id"] == run_id and listed[0]["session_id"] == "s-once"

    assert api.answer(run_id, pending["approval_id"], "once").json() == {"ok": True}
    run = api.wait(run_id)
    assert run["status"] == "completed"
    first = run["results"][0]
    assert first["decision"]["outcome"] == "approved"
    assert first["decision"]["decided_by"] == "user"
    assert first["stdout"] == "parked\n"
    assert run["results"][1]["stdout"] == "ok after\n"
    # "once" grants nothing: the same command in the same session asks again.
    again, _ = api.parked(["echo parked"], session_id="s-once")
    api.post(f"/v1/runs/{again}/cancel")


def test_a_session_answer_approves_the_same_command_in_that_session_only(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo granted"], session_id="s-sess")
    assert api.answer(run_id, pending["approval_id"], "session").status_code == 200
    assert api.wait(run_id)["status"] == "completed"

    second = api.wait(api.submit(["echo granted"], session_id="s-sess"))
    assert second["status"] == "completed"
    assert second["results"][0]["decision"]["decided_by"] != "user"  # nobody was asked
    assert second["results"][0]["stdout"] == "granted\n"

    other, _ = api.parked(["echo granted"], session_id="s-other")  # another session asks
    api.post(f"/v1/runs/{other}/cancel")


def test_an_always_answer_lands_in_config_yaml(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo forever"], session_id="s-a")
    assert api.answer(run_id, pending["approval_id"], "always").status_code == 200
    run = api.wait(run_id)
    assert run["status"] == "completed"
    assert run["results"][0]["decision"]["rule"] == "echo forever"
    text = (gateway.homes["alpha"] / "config.yaml").read_text()
    assert "echo forever" in text
    # A fresh session is approved by the saved rule without asking.
    later = api.wait(api.submit(["echo forever"], session_id="s-b"))
    assert later["results"][0]["decision"]["decided_by"] == "rule"


def test_deny_is_denied_by_the_user_and_stops_the_run(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo nope", "true"], session_id="s-d")
    r = api.answer(run_id, pending["approval_id"], "deny", reason="not today")
    assert r.status_code == 200
    run = api.wait(run_id)
    assert run["status"] == "failed"
    assert len(run["results"]) == 1  # the command after the refused one never ran
    decision = run["results"][0]["decision"]
    assert decision["outcome"] == "denied"
    assert decision["decided_by"] == "user"
    assert "user denied" in decision["message"]
    assert "not today" in decision["cause"]
    assert run["results"][0]["exit_code"] is None


def test_an_unanswered_prompt_times_out_and_never_says_denied(gateway: Gateway) -> None:
    api = gateway.profile["gamma"]  # approvals.timeout: 1
    run_id, _ = api.parked(["echo slow"], session_id="s-t")
    run = api.wait(run_id, timeout=10)
    assert run["status"] == "failed"
    decision = run["results"][0]["decision"]
    assert decision["outcome"] == "timeout"
    assert decision["decided_by"] == "nobody"
    message = decision["message"].lower()
    assert "not answered" in message and "silence is not consent" in message
    assert "denied" not in message
    assert run["results"][0]["exit_code"] is None


def test_cancel_withdraws_the_prompt_and_skips_the_rest(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["true", "echo wait", "true"], session_id="s-c")
    r = api.post(f"/v1/runs/{run_id}/cancel")
    assert r.status_code == 200
    assert r.json()["cancelled"] == 1
    run = api.wait(run_id)
    assert run["status"] == "cancelled"
    assert len(run["results"]) == 2
    decision = run["results"][1]["decision"]
    assert (decision["outcome"], decision["cause"]) == ("cancelled", "run cancelled")
    assert "silence is not consent" in decision["message"].lower()
    assert "denied" not in decision["message"].lower()
    # The approval is no longer open: answering it now is a conflict.
    assert api.answer(run_id, pending["approval_id"], "once").status_code == 409


def test_a_session_reset_cancels_the_parked_run(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, _ = api.parked(["echo reset-me"], session_id="s-r")
    other, _ = api.parked(["echo keep-me"], session_id="s-keep")
    r = api.post("/v1/sessions/alpha/s-r/reset")
    assert r.status_code == 200 and r.json() == {"cancelled": 1}
    run = api.wait(run_id)
    assert run["status"] == "cancelled"
    decision = run["results"][0]["decision"]
    assert (decision["outcome"], decision["cause"]) == ("cancelled", "session reset")
    assert api.run(other)["status"] == "waiting_for_approval"  # another session untouched
    api.post(f"/v1/runs/{other}/cancel")


def test_a_session_reset_drops_session_grants(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo grant"], session_id="s-g")
    api.answer(run_id, pending["approval_id"], "session")
    api.wait(run_id)
    assert api.post("/v1/sessions/alpha/s-g/reset").json() == {"cancelled": 0}
    again, _ = api.parked(["echo grant"], session_id="s-g")
    api.post(f"/v1/runs/{again}/cancel")


@pytest.mark.parametrize("context", ["cron", "webhook", "single_query"])
def test_unattended_contexts_get_the_policy_answer_without_parking(
    gateway: Gateway, context: str
) -> None:
    api = gateway.profile["alpha"]
    with api.client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        run_id = api.submit(["echo unattended", "true"], context=context, session_id="s-u")
        events.until(lambda name, data: name == "run.finished" and data["run_id"] == run_id)
    assert not [e for e in events.seen if e[0] == "approval.request"]
    run = api.run(run_id)
    assert run["status"] == "failed"
    assert len(run["results"]) == 1
    decision = run["results"][0]["decision"]
    assert decision["outcome"] == "blocked"
    assert decision["decided_by"] == "policy"
    assert decision["cause"] == f"unattended: {context}"
    assert "No user was asked" in decision["message"]
    # Allowlisted commands still run in an unattended context.
    assert api.wait(api.submit(["true"], context=context))["status"] == "completed"


def test_a_blocked_command_stops_the_commands_after_it(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run = api.wait(api.submit(["true", "rm -rf /", "true"]))
    assert run["status"] == "failed"
    assert [r["decision"]["outcome"] for r in run["results"]] == ["approved", "blocked"]
    assert run["results"][1]["exit_code"] is None


def test_run_requests_that_cannot_be_served(gateway: Gateway) -> None:
    admin = gateway.admin
    r = admin.post("/v1/runs", json={"commands": ["true"], "context": "interactive"})
    assert r.status_code == 422
    for body in (
        {"profile": "nobody", "commands": ["true"]},
        {"profile": "broken", "commands": ["true"]},
    ):
        r = admin.post("/v1/runs", json=body)
        assert r.status_code == 404, r.text
        detail = r.json()["detail"]
        assert isinstance(detail, str) and "\n" not in detail and body["profile"] in detail
    assert admin.post("/v1/runs", json={"commands": []}).status_code == 422
    both = {"profile": "alpha", "route": {"platform": "x"}, "commands": ["true"]}
    assert admin.post("/v1/runs", json=both).status_code == 422
    assert admin.get("/v1/runs/run-unknown").status_code == 404
    assert admin.post("/v1/runs/run-unknown/cancel").status_code == 404


def test_an_answer_must_name_an_open_approval_of_that_run(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    first, pending = api.parked(["echo one"], session_id="s-x")
    second, _ = api.parked(["echo two"], session_id="s-y")
    assert api.answer(second, pending["approval_id"], "once").status_code == 409
    assert api.answer(first, "ap-does-not-exist", "once").status_code == 409
    assert api.answer(first, pending["approval_id"], "sometimes").status_code == 422
    assert api.run(first)["status"] == "waiting_for_approval"  # nothing was answered
    assert api.answer(first, pending["approval_id"], "deny").status_code == 200
    assert api.answer(first, pending["approval_id"], "once").status_code == 409
    api.post(f"/v1/runs/{second}/cancel")


def test_approvals_test_is_pure(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    log = gateway.homes["alpha"] / "logs" / "decisions.jsonl"
    before = log.read_text() if log.exists() else ""
    verdict = api.post("/v1/approvals/test", json={"profile": "alpha", "command": "echo x"}).json()
    assert verdict["outcome"] == "ask" and verdict["segments"] == [["echo", "x"]]
    assert {"step", "result", "detail"} <= set(verdict["trace"][0])
    cron = api.post(
        "/v1/approvals/test", json={"profile": "alpha", "command": "echo x", "context": "cron"}
    ).json()
    assert (cron["outcome"], cron["cause"]) == ("blocked", "unattended: cron")
    allowed = api.post("/v1/approvals/test", json={"profile": "alpha", "command": "true"}).json()
    assert (allowed["outcome"], allowed["rule"]) == ("approved", "true")
    assert (log.read_text() if log.exists() else "") == before
    assert api.get("/v1/approvals").json() == []


def test_profiles_show_settings_with_secrets_masked(gateway: Gateway) -> None:
    rows = gateway.admin.get("/v1/profiles").json()
    by_name = {row["name"]: row for row in rows}
    assert set(by_name) == {"alpha", "beta", "gamma", "broken"}
    assert by_name["broken"]["status"] == "error" and by_name["broken"]["error"]
    alpha = gateway.admin.get("/v1/profiles/alpha").json()
    assert alpha["status"] == "ok" and alpha["epoch"] >= 1 and alpha["last_reload"]
    assert alpha["settings"]["approvals"]["mode"] == "strict"
    assert "MULTIPLEX_TOKEN" in alpha["dotenv_names"]
    assert "alpha-token-for-tests" not in json.dumps(rows)


def test_decisions_feed_lists_recent_decisions_newest_first(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    api.wait(api.submit(["true"]))
    run_id, pending = api.parked(["echo feed"])
    api.answer(run_id, pending["approval_id"], "deny")
    api.wait(run_id)
    rows = api.get("/v1/decisions", params={"limit": 10}).json()
    assert [(r["command"], r["outcome"]) for r in rows[:2]] == [
        ("echo feed", "denied"),
        ("true", "approved"),
    ]
    assert len({(r["ts"], r["command"]) for r in rows}) == len(rows)  # nothing listed twice


# -- events ----------------------------------------------------------------------------


def test_run_events_redeliver_the_open_request_after_a_reconnect(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id = api.submit(["echo sse"], session_id="s-sse")
    with api.client() as c:
        with c.stream("GET", f"/v1/runs/{run_id}/events") as response:
            first = SseReader(response).until(lambda name, _d: name == "approval.request")[1]
        # Disconnected; a new connection gets the same request again.
        with c.stream("GET", f"/v1/runs/{run_id}/events") as response:
            events = SseReader(response)
            again = events.until(lambda name, _d: name == "approval.request")[1]
            assert again["approval_id"] == first["approval_id"]
            assert again["run_id"] == run_id and again["command"] == "echo sse"
            listed = api.get("/v1/approvals", params={"state": "open"}).json()
            assert first["approval_id"] in [a["approval_id"] for a in listed]
            assert api.answer(run_id, first["approval_id"], "once").status_code == 200
            resolved = events.until(lambda name, _d: name == "approval.resolved")[1]
            assert resolved["choice"] == "once"
            done = events.until(lambda name, _d: name == "command.finished")[1]
            assert done["stdout"] == "sse\n" and done["decision"]["outcome"] == "approved"
            final = events.until(lambda name, _d: name == "run.finished")[1]
            assert final["status"] == "completed"
            assert events.next() is None  # the stream ends with the run


def test_events_of_a_finished_run_replay_run_finished_and_close(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id = api.submit(["true"])
    api.wait(run_id)
    with api.client() as c, c.stream("GET", f"/v1/runs/{run_id}/events") as response:
        events = SseReader(response)
        assert events.next() == ("run.finished", api.run(run_id))
        assert events.next() is None


def test_cancellation_events_say_why(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, pending = api.parked(["echo bye"])
    with api.client() as c, c.stream("GET", f"/v1/runs/{run_id}/events") as response:
        events = SseReader(response)
        events.until(lambda name, _d: name == "approval.request")
        api.post(f"/v1/runs/{run_id}/cancel")
        cancelled = events.until(lambda name, _d: name == "approval.cancelled")[1]
        assert cancelled["approval_id"] == pending["approval_id"]
        assert (cancelled["outcome"], cancelled["cause"]) == ("cancelled", "run cancelled")
        assert events.until(lambda name, _d: name == "run.finished")[1]["status"] == "cancelled"


def test_the_live_stream_replays_open_requests_and_carries_new_ones(gateway: Gateway) -> None:
    admin = gateway.admin
    old, old_pending = admin.parked(["echo old"], profile="alpha")
    with admin.client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response)
        replayed = events.until(lambda name, _d: name == "approval.request")[1]
        assert replayed["approval_id"] == old_pending["approval_id"]
        new = admin.submit(["echo new"], profile="beta")
        fresh = events.until(lambda n, d: n == "approval.request" and d["run_id"] == new)[1]
        assert fresh["profile"] == "beta"
        admin.post(f"/v1/runs/{new}/cancel")
        events.until(lambda n, d: n == "run.finished" and d["run_id"] == new)
    admin.post(f"/v1/runs/{old}/cancel")


# -- health and metrics ------------------------------------------------------------------


def test_health_readiness_and_metrics(gateway: Gateway) -> None:
    anon = gateway.anonymous
    assert anon.get("/healthz").status_code == 200
    assert anon.get("/readyz").status_code == 200
    api = gateway.profile["alpha"]
    api.wait(api.submit(["true", "rm -rf /"]))
    run_id, pending = api.parked(["echo m"])
    api.answer(run_id, pending["approval_id"], "deny")
    api.wait(run_id)
    text = gateway.admin.get("/metrics").text
    for outcome in ("approved", "blocked", "denied"):
        assert re.search(
            rf'multiplex_approval_decisions_total\{{[^}}]*outcome="{outcome}"[^}}]*profile="alpha"',
            text,
        ), outcome
    assert re.search(r'multiplex_runs_total\{profile="alpha",status="failed"\} 2\.0', text)
    assert anon.get("/metrics").status_code == 401
    assert api.get("/metrics").status_code == 404  # profile names are the admin's to see
    watcher = gateway.sup.watcher
    assert watcher is not None and watcher.alive
    watcher.stop()
    r = anon.get("/readyz")
    assert r.status_code == 503 and r.json()["watcher_alive"] is False


def test_the_dashboard_page_and_static_files_are_served_without_auth(gateway: Gateway) -> None:
    page = gateway.anonymous.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert gateway.anonymous.get("/static/..%2Fconfig.yaml").status_code == 404
    assert gateway.anonymous.get("/static/.hidden").status_code == 404
    assert gateway.anonymous.get("/static/no-such-file.js").status_code == 404


def test_stopping_cancels_parked_runs_as_shutdown(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    run_id, _ = api.parked(["echo parked"])
    gateway.server.stop()
    run = gateway.server.gateway.runs.get(run_id)
    assert run is not None and run.status == "cancelled"
    assert run.results[0]["decision"]["cause"] == "supervisor shutting down"


# -- multiplex up (a real process) ------------------------------------------------------------


def _start_up(
    root: Path, *args: str, token: str | None = ADMIN
) -> tuple[subprocess.Popen[str], str, list[str]]:
    """Start ``multiplex up``; return it, its announcement line and the lines before it."""
    env = {k: v for k, v in os.environ.items() if k != "MULTIPLEX_ADMIN_TOKEN"}
    if token is not None:
        env["MULTIPLEX_ADMIN_TOKEN"] = token
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "multiplex",
            "--config",
            str(root / "multiplex.yaml"),
            "up",
            "--port",
            "0",
            *args,
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    assert proc.stderr is not None
    before: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line.startswith("multiplex gateway on "):
            return proc, line.strip(), before
        before.append(line)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"multiplex up did not start: {proc.stderr.read()}")


@pytest.mark.slow
def test_multiplex_up_drains_on_sigterm(tmp_path: Path) -> None:
    homes = make_homes(tmp_path)
    proc, line, _ = _start_up(tmp_path, "--grace", "3")
    try:
        assert "admin token" not in line  # given by the environment, so never printed
        base = re.search(r"http://[^ ]+/", line)
        assert base is not None
        api = Api(base.group(0).rstrip("/"), ADMIN)
        assert api.get("/readyz").status_code == 200
        run_id, _ = api.parked(["echo until-shutdown"], profile="alpha")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        logs = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    decisions = (homes["alpha"] / "logs" / "decisions.jsonl").read_text().splitlines()
    last = json.loads(decisions[-1])
    assert (last["outcome"], last["cause"]) == ("cancelled", "supervisor shutting down")
    events = [json.loads(x) for x in logs.splitlines() if x.startswith("{")]
    finished = [e for e in events if e.get("event") == "run.finished"]
    assert finished and finished[-1]["run_id"] == run_id and finished[-1]["status"] == "cancelled"
    assert any(e.get("event") == "approval.asked" for e in events)
    assert "alpha-token-for-tests" not in logs


@pytest.mark.slow
def test_multiplex_up_prints_a_generated_token_and_warns_beyond_loopback(tmp_path: Path) -> None:
    make_homes(tmp_path)
    proc, line, before = _start_up(tmp_path, "--host", "0.0.0.0", token=None)
    try:
        match = re.search(r"http://0\.0\.0\.0:(\d+)/ \(admin token: (\S+)\)$", line)
        assert match is not None, line
        port, token = match.groups()
        api = Api(f"http://127.0.0.1:{port}", token)
        assert api.get("/v1/whoami").json() == {"role": "admin", "profile": None}
        assert Api(f"http://127.0.0.1:{port}", "wrong").get("/v1/whoami").status_code == 401
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        logs = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [*before, *logs.splitlines()]
    warnings = [json.loads(x) for x in lines if x.startswith('{"') and '"warning"' in x]
    assert any("not a loopback address" in w["message"] for w in warnings)


def test_multiplex_up_refuses_a_busy_port_in_one_line(tmp_path: Path) -> None:
    import socket

    make_homes(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "multiplex",
                "--config",
                str(tmp_path / "multiplex.yaml"),
                "up",
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert result.returncode == 2
    assert "cannot listen on" in result.stderr and "Traceback" not in result.stderr
