"""Issue 31 item 9, through the real CLI: an example in every command's --help, shell
completion of profile names and approval/run ids, and what ``-p`` limits."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from multiplex.cli._app import app
from tests.cli.conftest import Up
from tests.conftest import REPO, run_cli

CONSOLE_SCRIPT = Path(sys.executable).parent / "multiplex"


def _commands(cmd: Any, path: list[str]) -> list[list[str]]:
    if hasattr(cmd, "commands"):
        return [p for name, sub in cmd.commands.items() for p in _commands(sub, [*path, name])]
    return [path]


def test_every_commands_help_has_an_example() -> None:
    runner = CliRunner()
    paths = _commands(typer.main.get_command(app), [])
    assert len(paths) > 20
    missing = []
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        if "Example: multiplex" not in result.output:
            missing.append(" ".join(path))
    assert not missing, missing


def _complete(words: str, cwd: Path) -> list[str]:
    if not CONSOLE_SCRIPT.exists():
        pytest.skip(f"no console script at {CONSOLE_SCRIPT}")
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("MULTIPLEX_")}
    env.update(_MULTIPLEX_COMPLETE="complete_bash", COMP_WORDS=words,
               COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1)))  # fmt: skip
    done = subprocess.run(
        [str(CONSOLE_SCRIPT)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout.split()


def test_profile_names_complete() -> None:
    assert _complete("multiplex profiles show r", REPO) == ["research"]
    assert "default" in _complete("multiplex exec -p d", REPO)
    assert _complete("multiplex allowlist list -p ", REPO) == sorted(
        p.parent.name for p in (REPO / "profiles").glob("*/config.yaml")
    )


@pytest.mark.slow
def test_approval_and_run_ids_complete(up: Up) -> None:
    run_id, pending = up.profile("alpha").parked(["echo complete-me"], session_id="s-compl")
    try:
        assert pending["approval_id"] in _complete("multiplex approvals answer ap-", up.root)
        assert run_id in _complete("multiplex runs show run-", up.root)
    finally:
        up.admin.post(f"/v1/runs/{run_id}/cancel")


def test_p_says_it_limits_what_is_served() -> None:
    shown = run_cli("-p", "research", "profiles", "show", "default", cwd=REPO)
    assert shown.returncode == 2
    assert "-p research limits what is served to that one profile" in shown.stderr
    assert "Traceback" not in shown.stderr
