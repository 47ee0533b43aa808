"""Issue 31 items 2, 3 and 4, through the real CLI against a real ``multiplex up``.

``approvals list --follow`` prints one line per event kind; ids are never cut
in tables and any unique prefix is accepted; a command that could not start
(an ssh host that does not resolve) ends its run ``failed`` with the cause.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.cli.conftest import Up, start_up, stop_up
from tests.conftest import write_home
from tests.gateway.conftest import Api, make_homes

pytestmark = pytest.mark.slow

OPS_TOKEN = "ops-token-for-tests-dddd4444"
OPS = """\
    terminal:
      backend: ssh
      host: ops.invalid
      user: deploy
      known_hosts: known_hosts
    command_allowlist: ["systemctl restart *"]
    approvals:
      mode: strict
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    root = tmp_path_factory.mktemp("operator")
    homes = make_homes(root)
    for name in ("alpha", "beta"):
        config = homes[name] / "config.yaml"
        config.write_text(config.read_text().replace("timeout: 30", "timeout: 900"))
    homes["ops"] = write_home(root / "profiles", "ops", OPS, f"MULTIPLEX_TOKEN={OPS_TOKEN}\n")
    (homes["ops"] / "known_hosts").write_text("")
    proc, url, token = start_up(root)
    try:
        yield Up(proc, root, homes, url, token)
    finally:
        stop_up(proc)


def test_follow_prints_each_event_kind(up: Up) -> None:
    api = up.profile("beta")
    answered_run, answered = api.parked(["echo answer-me"], session_id="s-kinds")
    cancelled_run, cancelled = api.parked(["echo cancel-me"], session_id="s-kinds")
    follower = subprocess.Popen(
        [sys.executable, "-m", "multiplex", "approvals", "list", "--follow"],
        cwd=up.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert follower.stdout is not None
        lines: list[str] = []

        def read_until(prefix: str, approval_id: str) -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = follower.stdout.readline()  # type: ignore[union-attr]
                assert line, "the follower stopped"
                lines.append(line.rstrip("\n"))
                if line.startswith(prefix) and approval_id in line:
                    return
            raise AssertionError(f"no {prefix} for {approval_id}: {lines}")

        # On connect the open requests are sent again: the follower is listening.
        read_until("approval.request", cancelled["approval_id"])
        assert api.answer(answered_run, answered["approval_id"], "once").status_code == 200
        read_until("approval.resolved", answered["approval_id"])
        assert up.cli("runs", "cancel", cancelled_run).returncode == 0
        read_until("approval.cancelled", cancelled["approval_id"])
        text = "\n".join(lines)
        assert "None" not in text and "[- (?); ask: ]" not in text, text
        [resolved] = [x for x in lines if x.startswith("approval.resolved")]
        assert "answered once by " in resolved, resolved
        [ended] = [x for x in lines if x.startswith("approval.cancelled")]
        assert "cancelled: run cancelled" in ended, ended
        requested = [x for x in lines if x.startswith("approval.request")]
        assert any("echo cancel-me" in x and "s-kinds" in x for x in requested)
    finally:
        follower.terminate()
        follower.wait(timeout=30)


def test_ids_whole_in_tables_and_prefixes_accepted(up: Up) -> None:
    api = up.profile("alpha")
    # "run-" must match two runs whatever ran before in this gateway (alone, this is the first).
    extra, _ = api.parked(["echo another-run"])
    run_id, pending = api.parked(["echo prefix-me"], session_id="s-a-rather-long-session-name")
    # A narrow terminal: ids stay whole; long text is cut unless --no-trunc.
    narrow = {"COLUMNS": "60"}
    table = up.cli("approvals", "list", env=narrow)
    assert pending["approval_id"] in table.stdout and run_id in table.stdout, table.stdout
    runs = up.cli("runs", "list", env=narrow)
    assert run_id in runs.stdout and "s-a-rather-long-session-name" in runs.stdout
    shown = up.cli("runs", "show", run_id[:8])  # "run-" and 4 characters
    assert shown.returncode == 0, shown.stderr
    assert run_id in shown.stdout and "prefix-me" in shown.stdout
    ambiguous = up.cli("runs", "show", "run-")
    assert ambiguous.returncode == 2 and "ambiguous" in ambiguous.stderr
    assert run_id in ambiguous.stderr
    assert up.cli("runs", "cancel", extra).returncode == 0
    answered = up.cli("approvals", "answer", pending["approval_id"][:7], "deny")
    assert answered.returncode == 0, answered.stderr
    assert pending["approval_id"] in answered.stdout
    assert api.wait(run_id)["results"][0]["decision"]["outcome"] == "denied"
    other, _ = api.parked(["echo cancel-by-prefix"], session_id="s-prefix")
    cancel = up.cli("runs", "cancel", other[:10])
    assert cancel.returncode == 0 and other in cancel.stdout
    long_line = "echo " + "x" * 200
    api.wait(api.submit([long_line], session_id="s-long"), "waiting_for_approval")
    # An approval's command is what a human decides on: wrapped, never cut.
    asked = up.cli("approvals", "list", env={"COLUMNS": "250"})
    assert asked.stdout.count("x") > 200  # and the x of "expires"
    cut = up.cli("runs", "list", env={"COLUMNS": "250"})
    whole = up.cli("runs", "list", "--no-trunc", env={"COLUMNS": "250"})
    assert "…" in cut.stdout and cut.stdout.count("x") < 200
    assert whole.stdout.count("x") >= 200


def test_a_command_that_could_not_start_fails_the_run(up: Up) -> None:
    ops = Api(up.url, OPS_TOKEN)
    run_id = ops.submit(["systemctl restart nginx", "systemctl restart later"], session_id="s-ops")
    run = ops.wait(run_id, timeout=60)
    assert run["status"] == "failed", run
    [result] = run["results"]  # the second command never ran
    assert result["decision"]["outcome"] == "approved" and result["exit_code"] is None
    assert "ops.invalid" in result["error"]
    assert "ops.invalid" in run["error"] and "did not run" in run["error"]
    shown = up.cli("runs", "show", run_id)
    assert shown.returncode == 0, shown.stderr
    assert f"{run_id}  (failed)" in shown.stdout
    assert "did not run: ssh" in shown.stdout and "ops.invalid" in shown.stdout
    assert "stderr:" in shown.stdout
    listed = json.loads(up.cli("runs", "list", "--json", "--status", "failed").stdout)
    assert run_id in {r["run_id"] for r in listed}
