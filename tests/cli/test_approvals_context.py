"""``multiplex approvals list`` says who asked and when, what the command would run in and
why it asks, in words (docs/approvals.md#what-a-prompt-shows, docs/cli.md).

A real ``multiplex up`` in a second process; the real CLI reads it over HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Up, start_up, stop_up
from tests.gateway.conftest import make_homes

pytestmark = pytest.mark.slow

ALPHA = """\
terminal:
  cwd: .
  egress:
    allow: [pypi.org, "*.pythonhosted.org", "db.corp.example:5432", x.example]
command_allowlist: ["true"]
approvals:
  mode: strict
  timeout: 900
"""
BETA = """\
terminal:
  cwd: .
  network: off
command_allowlist: ["true"]
approvals:
  mode: strict
  timeout: 900
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    root = tmp_path_factory.mktemp("up-context")
    homes = make_homes(root)
    # alpha: mode strict, an egress allow list of four; beta: network off.
    (homes["alpha"] / "config.yaml").write_text(ALPHA)
    (homes["beta"] / "config.yaml").write_text(BETA)
    proc, url, token = start_up(root)
    try:
        yield Up(proc, root, homes, url, token)
    finally:
        stop_up(proc)


def _row(table: str, approval_id: str) -> dict[str, str]:
    """The table's row of ``approval_id``, each column's wrapped lines joined by a space."""
    lines = table.splitlines()
    names = [c.strip() for c in lines[1].strip("┃").split("┃")]
    start = next(i for i, line in enumerate(lines) if approval_id in line)
    parts: list[list[str]] = [[] for _ in names]
    for line in lines[start:]:
        if not line.startswith("│") or (line is not lines[start] and line[2:4] == "ap"):
            break
        for index, cell in enumerate(line.strip("│").split("│")):
            if cell.strip():
                parts[index].append(cell.strip())
    return {name: " ".join(texts) for name, texts in zip(names, parts, strict=True)}


def test_approvals_list_says_who_when_in_what_and_why(up: Up, tmp_path: Path) -> None:
    alpha = up.profile("alpha")
    run_a, pending_a = alpha.parked(["rm -rf ./scratch-dir"], session_id="s-list")
    run_b, pending_b = up.admin.parked(["echo harmless"], profile="beta", session_id="s-list")
    assert pending_a["egress_allow"][0] == "pypi.org" and pending_b["network"] == "off"

    listed = up.cli("approvals", "list", "--no-trunc", env={"COLUMNS": "400"})
    assert listed.returncode == 0, listed.stderr
    text = listed.stdout
    header = text.splitlines()[1]
    for column in ("asked", "runs in", "asks because"):
        assert column.upper() in header.upper(), header
    assert "detection" not in text  # the gate's step name is not what an operator reads

    row_a = _row(text, pending_a["approval_id"])
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d, \d+ s ago, by the alpha profile's token \(api\)", row_a["asked"]
    ), row_a
    assert re.fullmatch(
        r"\S+/alpha/workspace \(local\); sandbox (bwrap|none); network: out through the egress "
        r"proxy to pypi\.org, \*\.pythonhosted\.org, db\.corp\.example:5432 and 1 more only",
        row_a["runs in"],
    ), row_a
    assert row_a["asks because"] == "recursive-delete: " + pending_a["patterns"][0]["description"]

    row_b = _row(text, pending_b["approval_id"])
    assert row_b["asked"].endswith(", by the admin token (api)"), row_b
    assert row_b["runs in"].endswith("; network: no network (loopback only)"), row_b
    assert row_b["asks because"] == "strict mode: the command is not on the allowlist"

    as_json = up.cli("approvals", "list", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert '"asked_by": "the alpha profile\'s token"' in as_json.stdout
    for run_id in (run_a, run_b):
        up.admin.post(f"/v1/runs/{run_id}/cancel")
