"""docs/allowlist.md#policy-diff: a proposed config.yaml replayed against the profile's recorded decisions.

Decisions are recorded by a real supervisor (its gate, its decisions.jsonl);
``multiplex policy diff`` runs as the real console script.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli

CURRENT = """\
terminal:
  cwd: .
command_allowlist: ["ls *"]
approvals:
  mode: manual
"""
# Strict, and git push denied: ls would ask (blocked in cron), git push blocked.
PROPOSED = """\
command_allowlist: ["echo *"]   # the commands agents run, commented
approvals:
  mode: strict
  deny: ["git push *"]
terminal:
  cwd: .
"""


@pytest.fixture
def recorded(make_home, supervisor_of) -> Path:  # type: ignore[no-untyped-def]
    home = make_home("research", CURRENT, "API_KEY=sk-research-SECRET-value-1234\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    for command in ["ls -la", "git push origin main", "rm -rf ./build", "echo hi", "echo hi"]:
        sup.run(command, profile="research", session="s", context="cron")
    sup.run("echo sk-research-SECRET-value-1234", profile="research", context="cron")
    return home  # type: ignore[no-any-return]


def _diff(root: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_cli("policy", "diff", "-p", "research", *extra, cwd=root, env={"COLUMNS": "200"})


def test_every_command_whose_verdict_would_change_and_exit_1(
    recorded: Path, tmp_path: Path
) -> None:
    proposed = tmp_path / "proposed.yaml"
    proposed.write_text(PROPOSED)
    result = _diff(tmp_path, "--proposed", str(proposed), "--json")
    assert result.returncode == 1, result.stderr
    changes = json.loads(result.stdout)["changes"]
    assert changes == [
        {
            "command": "git push origin main",
            "context": "cron",
            "was": "approved",
            "would_be": "blocked",
            "cause": "deny rule: git push *",
            "count": 1,
        },
        {
            "command": "ls -la",
            "context": "cron",
            "was": "approved",
            "would_be": "blocked",
            "cause": "unattended: cron",
            "count": 1,
        },
    ]
    # The records' own commands: redacted as they are, never a secret.
    no_echo = tmp_path / "no-echo.yaml"
    no_echo.write_text(CURRENT.replace("mode: manual", "mode: manual\n  deny: ['echo *']"))
    echoes = json.loads(_diff(tmp_path, "--proposed", str(no_echo), "--json").stdout)["changes"]
    assert [(c["command"], c["count"]) for c in echoes] == [
        ("echo [REDACTED:known]", 1),
        ("echo hi", 2),
    ]
    assert "SECRET" not in json.dumps(echoes)
    table = _diff(tmp_path, "--proposed", str(proposed))
    assert table.returncode == 1 and "git push origin main" in table.stdout
    # Nothing was written: the home's config and history are as they were.
    assert (recorded / "config.yaml").read_text() == CURRENT
    assert "echo *" not in (recorded / "config.yaml").read_text()


def test_an_identical_or_wider_proposal_changes_nothing_and_exits_0(
    recorded: Path, tmp_path: Path
) -> None:
    same = tmp_path / "same.yaml"
    same.write_text(CURRENT + "# only a comment added\n")
    result = _diff(tmp_path, "--proposed", str(same))
    assert result.returncode == 0, result.stderr
    assert "would be decided otherwise" in result.stdout
    # Since a moment from now: no record to replay.
    later = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() + 3600))
    none = _diff(tmp_path, "--proposed", str(same), "--since", later, "--json")
    assert none.returncode == 0 and json.loads(none.stdout)["changes"] == []
    # A rule that allows more: rm -rf ./build, blocked in cron, would now be allowed.
    wider = tmp_path / "wider.yaml"
    wider.write_text(CURRENT.replace('["ls *"]', '["ls *", "rm -rf ./build"]'))
    more = _diff(tmp_path, "--proposed", str(wider), "--json")
    assert more.returncode == 1
    assert [
        (c["command"], c["was"], c["would_be"]) for c in json.loads(more.stdout)["changes"]
    ] == [("rm -rf ./build", "blocked", "approved")]


def test_a_proposal_that_does_not_load_is_one_line_naming_file_and_key(
    recorded: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("approvals:\n  mode: sometimes\n")
    result = _diff(tmp_path, "--proposed", str(bad))
    assert result.returncode == 2
    assert "bad.yaml" in result.stderr and "approvals.mode" in result.stderr
    assert "Traceback" not in result.stderr
    missing = _diff(tmp_path, "--proposed", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "nope.yaml" in missing.stderr
    unknown = run_cli("policy", "diff", "-p", "nobody", "--proposed", str(bad), cwd=tmp_path)
    assert unknown.returncode == 2 and "nobody" in unknown.stderr
