"""``multiplex check`` findings (issue 31 item 9), through the real CLI.

Each finding once (not also as a log line on stderr), in one layout for
schema and rule errors, in the operator's words (no pydantic wording); a
``profiles_dir`` that does not exist is an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tests.conftest import HomeFactory, run_cli

LAYOUT = re.compile(r"^error: profile 'a': (/\S+):(\d+): ([\w.]+): \S")


def test_each_finding_once_in_one_layout_and_plain_words(
    make_home: HomeFactory, write_config: Callable[[str], Path]
) -> None:
    make_home("a", 'command_allowlist: ["ls *", "*"]\nterminal:\n  timeout: abc\n')
    config = write_config("profiles_dir: profiles\ndefault_profile: a\n")
    result = run_cli("--config", str(config), "check")
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 2, result.stdout
    assert all(LAYOUT.match(line) for line in errors), errors
    assert any("terminal.timeout: must be a number, got a string" in e for e in errors)
    assert any("command_allowlist.1: invalid rule '*'" in e for e in errors)
    assert "timeout" not in result.stderr and "Input should be" not in result.stdout
    assert "Value error" not in result.stdout


def test_a_missing_profiles_dir_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: nowhere\n")
    result = run_cli("check", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert f"profiles_dir: no such folder: {tmp_path / 'nowhere'}" in result.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: empty\n")
    warned = run_cli("check", cwd=tmp_path)
    assert warned.returncode == 0 and "serves no profile home" in warned.stdout


def test_multiplex_yaml_errors_in_plain_words(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ngateway: {port: abc}\n")
    result = run_cli("check", cwd=tmp_path)
    assert "gateway.port: must be a whole number, got a string" in result.stdout
    assert "Input should be" not in result.stdout + result.stderr
