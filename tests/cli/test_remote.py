"""docs/cli.md: the CLI for a running gateway, against a real ``multiplex up`` process.

``approvals list|answer``, ``runs list|show|cancel`` reach the gateway through
the URL and admin token files ``up`` writes; ``decisions`` reads every
profile's ``decisions.jsonl``, the same records ``GET /v1/decisions`` pages through.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import Up, start_up, stop_up
from tests.gateway.conftest import make_homes

pytestmark = pytest.mark.slow


def _open(up: Up) -> list[dict]:  # type: ignore[type-arg]
    result = up.cli("approvals", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows: list[dict] = json.loads(result.stdout)  # type: ignore[type-arg]
    return rows


def test_token_and_url_files_and_a_refused_token(up: Up) -> None:
    port = up.url.rsplit(":", 1)[1]
    entry = up.root / ".multiplex" / "gateways" / port
    token_file = entry / "admin-token"
    assert token_file.read_text().strip() == up.token
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert (up.root / ".multiplex").stat().st_mode & 0o777 == 0o700
    assert entry.stat().st_mode & 0o777 == 0o700
    assert (entry / "url").read_text().strip().rstrip("/") == up.url
    assert (entry / "pid").read_text().strip() == str(up.proc.pid)
    assert _open(up) == [] or isinstance(_open(up), list)
    wrong = up.cli("approvals", "list", "--token", "not-the-token")
    assert wrong.returncode == 2 and "refused the token from --token" in wrong.stderr
    assert "not-the-token" not in wrong.stderr
    nowhere = up.cli("runs", "list", "--url", "http://127.0.0.1:9")
    assert nowhere.returncode == 2 and "cannot reach the gateway" in nowhere.stderr
    assert "Traceback" not in nowhere.stderr
    # A broken local multiplex.yaml does not stop answering a gateway named in full.
    config = up.root / "multiplex.yaml"
    good = config.read_text()
    config.write_text(good + "rootes: []\n")
    try:
        listed = up.cli("approvals", "list", "--json", "--url", up.url, "--token", up.token)
        assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr
        local = up.cli("approvals", "list")  # nothing named: the file is read, and said broken
        assert local.returncode == 2 and "rootes" in local.stderr
    finally:
        config.write_text(good)
    # A request the gateway refuses as invalid is one line naming the field, not JSON.
    bad = up.cli("run", "-p", "default", "--context", "interactive", "--", "true")
    assert bad.returncode == 2 and "context: " in bad.stderr, bad.stderr
    assert "[{" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_list_answer_and_follow_approvals(up: Up) -> None:
    api = up.profile("alpha")
    run_id, pending = api.parked(["rm -rf ./scratch-dir"], session_id="s-cli")
    rows = [a for a in _open(up) if a["approval_id"] == pending["approval_id"]]
    assert len(rows) == 1
    row = rows[0]
    # Why and where: the same fields in the run's pending_approval and the list.
    effective = up.admin.get("/v1/profiles/alpha").json()["cwd"]
    assert row["cwd"] == effective and row["backend"] == "local"
    assert row["step"] == "detection"
    assert {"name": "recursive-delete", "description": row["patterns"][0]["description"]} in row[
        "patterns"
    ]
    assert pending["cwd"] == row["cwd"] and pending["patterns"] == row["patterns"]
    assert row["dangers"] == [{"pattern": "recursive-delete", "segment": "rm -rf ./scratch-dir"}]
    table = up.cli("approvals", "list", env={"COLUMNS": "250"})
    assert pending["approval_id"] in table.stdout
    # docs/approvals.md#what-a-prompt-shows: why it asks in words (one danger: its sentence).
    assert "recursive-delete: Deletes recursively" in table.stdout
    bad = up.cli("approvals", "answer", pending["approval_id"], "sometimes")
    assert bad.returncode == 2 and "once" in bad.stderr and "deny" in bad.stderr
    ghost = up.cli("approvals", "answer", "ap-nope", "once")
    assert ghost.returncode == 2 and "no open approval request 'ap-nope'" in ghost.stderr
    answered = up.cli("approvals", "answer", pending["approval_id"], "deny", "--reason", "not now")
    assert answered.returncode == 0, answered.stderr
    done = api.wait(run_id)
    decision = done["results"][0]["decision"]
    assert (decision["outcome"], decision["decided_by"]) == ("denied", "user")
    assert "not now" in decision["cause"]


def test_follow_prints_new_requests(up: Up) -> None:
    follower = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "approvals", "list", "--follow", "--json"],
        cwd=up.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        time.sleep(0)  # the follower connects on its own; the request below may come first
        run_id, pending = up.profile("beta").parked(["echo followed"], session_id="s-follow")
        deadline = time.monotonic() + 60
        seen: list[dict] = []  # type: ignore[type-arg]
        while time.monotonic() < deadline:
            line = follower.stdout.readline()
            if not line:
                break
            event = json.loads(line)
            seen.append(event)
            if event.get("approval_id") == pending["approval_id"]:
                break
        match = [e for e in seen if e.get("approval_id") == pending["approval_id"]]
        assert match and match[0]["event"] == "approval.request" and match[0]["step"]
        cancelled = up.cli("runs", "cancel", run_id)
        assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout
    finally:
        follower.terminate()
        follower.wait(timeout=30)


def test_runs_list_show_cancel(up: Up) -> None:
    api = up.profile("alpha")
    finished = api.submit(["true"], session_id="s-runs")
    api.wait(finished)
    parked, _pending = api.parked(["echo waiting"], session_id="s-runs")
    listing = up.cli("runs", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    by_id = {r["run_id"]: r for r in json.loads(listing.stdout)}
    assert by_id[finished]["status"] == "completed"
    assert by_id[parked]["status"] == "waiting_for_approval" and by_id[parked]["pending_approval"]
    waiting = up.cli("runs", "list", "--json", "--status", "waiting_for_approval")
    assert parked in {r["run_id"] for r in json.loads(waiting.stdout)}
    assert finished not in {r["run_id"] for r in json.loads(waiting.stdout)}
    shown = up.cli("runs", "show", parked, "--json")
    data = json.loads(shown.stdout)
    assert data["schema_version"] == 1 and data["pending_approval"]["cwd"]
    human = up.cli("runs", "show", finished)
    assert "completed" in human.stdout and "exit 0" in human.stdout
    cancel = up.cli("runs", "cancel", parked)
    assert cancel.returncode == 0
    assert api.wait(parked)["status"] == "cancelled"
    missing = up.cli("runs", "show", "run-nope")
    assert missing.returncode == 2 and "run-nope" in missing.stderr


def test_decisions_from_the_files_and_the_api(up: Up) -> None:
    api = up.profile("gamma")
    for _ in range(3):
        api.wait(api.submit(["true"], session_id="s-dec"))
    records = [
        json.loads(line)
        for line in (up.homes["gamma"] / "logs" / "decisions.jsonl").read_text().splitlines()
    ]
    assert len(records) >= 3
    cli = up.cli("decisions", "-p", "gamma", "--json", "--outcome", "approved", "--limit", "2")
    assert cli.returncode == 0, cli.stderr
    rows = [json.loads(line) for line in cli.stdout.splitlines()]
    assert all(row.pop("schema_version") == 1 for row in rows)  # docs/cli.md#json-outputs
    assert rows == [r for r in records if r["outcome"] == "approved"][-2:]  # oldest first
    # The API: the same fields as the file (plus session_id), newest first, paged.
    page = up.admin.get("/v1/decisions", params={"profile": "gamma", "limit": 1, "offset": 1})
    assert page.status_code == 200
    [second_newest] = page.json()
    assert second_newest == {**records[-2], "session_id": records[-2]["session"]}
    only_denied = up.admin.get("/v1/decisions", params={"outcome": "denied", "profile": "gamma"})
    assert only_denied.json() == []
    # A profile token sees its own profile's history only.
    mine = up.profile("beta").get("/v1/decisions", params={"limit": 1000}).json()
    assert {r["profile"] for r in mine} <= {"beta"}
    since = up.cli("decisions", "--json", "--since", "1h", "--session", "s-dec")
    assert {json.loads(x)["session"] for x in since.stdout.splitlines()} == {"s-dec"}
    bogus = up.cli("decisions", "--since", "yesterday-ish")
    assert bogus.returncode == 2 and "--since" in bogus.stderr
    typo = up.cli("decisions", "-p", "gama")
    assert typo.returncode == 2 and "did you mean 'gamma'" in typo.stderr


def test_decisions_follow(up: Up) -> None:
    follower = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "decisions", "--follow", "--json", "--limit", "1",
         "--session", "s-tail"],
        cwd=up.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert follower.stdout is not None
        # Keep producing until the follower (which starts at the files' end) prints one.
        api = up.profile("alpha")
        line = ""
        deadline = time.monotonic() + 60
        while not line and time.monotonic() < deadline:
            api.wait(api.submit(["true"], session_id="s-tail"))
            import select

            ready, _, _ = select.select([follower.stdout], [], [], 2.0)
            if ready:
                line = follower.stdout.readline()
        assert line, "decisions --follow printed nothing"
        row = json.loads(line)
        assert row["session"] == "s-tail" and row["profile"] == "alpha"
    finally:
        follower.terminate()
        follower.wait(timeout=30)


def test_up_removes_its_token_file_on_exit(tmp_path: Path) -> None:
    make_homes(tmp_path)
    proc, url, _token = start_up(tmp_path)
    entry = tmp_path / ".multiplex" / "gateways" / url.rsplit(":", 1)[1]
    assert (entry / "admin-token").is_file()
    stop_up(proc)
    assert proc.returncode == 0
    assert not entry.exists()
