"""docs/audit.md#os-level-checks: from inside A's sandbox, B's canary is unreadable and stray writes fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.audit import run_audit
from multiplex.audit._canaries import make_canaries
from multiplex.audit._oscheck import check_os
from multiplex.execution import bwrap_status
from tests.conftest import write_home

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")


def test_audit_runs_the_os_checks_and_says_when_it_cannot(tmp_path: Path) -> None:
    root = tmp_path / "profiles"
    write_home(root, "a", "terminal: {cwd: ., sandbox: bwrap}\n", "A_TOKEN=a-secret-value-1234\n")
    write_home(root, "b", "terminal: {cwd: ., sandbox: bwrap}\n", "B_TOKEN=b-secret-value-5678\n")
    write_home(root, "open", "terminal: {cwd: ., sandbox: none}\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: a\n")
    report = run_audit(tmp_path / "multiplex.yaml")
    assert [leak for leak in report.leaks if leak.kind == "sandbox"] == []
    skipped = [n for n in report.notes if "OS-level checks skipped" in n]
    assert len(skipped) == 1 and skipped[0].startswith("open:")


def test_a_sandbox_that_shows_another_home_is_reported(tmp_path: Path) -> None:
    # B's home lives outside the profiles folder; a supervisor that forgot to hide
    # it (hidden paths emptied) must be caught by the check, not pass it.
    # a may write the folder holding b: the bind shows b unless b is hidden after it.
    b_home = write_home(tmp_path / "elsewhere", "b", "terminal: {sandbox: bwrap}\n")
    write_home(
        tmp_path / "profiles",
        "a",
        f"terminal: {{cwd: ., sandbox: bwrap, writable_paths: ['{tmp_path / 'elsewhere'}']}}\n",
    )
    (tmp_path / "multiplex.yaml").write_text(
        f"profiles_dir: profiles\nprofiles: [a, {b_home}]\ndefault_profile: a\n"
    )
    canaries = {"a": make_canaries("a"), "b": make_canaries("b")}
    (b_home / "credentials").mkdir()
    (b_home / canaries["b"].cred_relative).write_text(canaries["b"].cred_content)
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    try:
        assert check_os(sup, "a", canaries).leaks == []  # hidden: unreadable
        sup.__dict__["hidden_paths"] = ()  # the defect under test
        leaks = check_os(sup, "a", canaries).leaks
    finally:
        sup.close()
    assert [(leak.kind, leak.source) for leak in leaks] == [("sandbox", "b")]
    assert canaries["b"].cred_content not in str(leaks)
