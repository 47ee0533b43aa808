"""docs/cli.md: --version, completion, global options after the subcommand, choices,
"did you mean", flags shown as flags, human output without Python reprs, profiles init."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from multiplex import __version__
from tests.conftest import run_cli


def test_version_and_completion() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"multiplex {__version__}"
    helptext = run_cli("--help", env={"COLUMNS": "200"}).stdout
    assert "--install-completion" in helptext and "--show-completion" in helptext


def test_global_options_after_the_subcommand(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  deny: ['git push *']\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    after = run_cli("profiles", "list", "--json", "--config", str(config), cwd=Path("/"))
    assert after.returncode == 0, after.stderr
    assert [r["name"] for r in json.loads(after.stdout)] == ["p"]
    # -p after the subcommand is standalone mode for commands without their own -p.
    standalone = run_cli("profiles", "list", "--json", "-p", "p", "--config", str(config))
    assert [r["name"] for r in json.loads(standalone.stdout)] == ["p"]
    # After `--`, a word that looks like a global option belongs to the command.
    verdict = run_cli(
        "approvals", "test", "-p", "p", "--config", str(config), "--json",
        "--", "git", "push", "--config", "x",
    )  # fmt: skip
    assert verdict.returncode == 0, verdict.stderr
    data = json.loads(verdict.stdout)
    assert data["segments"] == [["git", "push", "--config", "x"]] and data["outcome"] == "blocked"


def test_invalid_choice_lists_the_choices_in_one_error(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli(
        "--config", str(config), "approvals", "test", "-p", "p", "--context", "bogus", "--", "ls"
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    error = [line for line in result.stderr.splitlines() if "bogus" in line]
    assert len(error) == 1
    for choice in ("interactive", "gateway", "api", "cron", "webhook", "single_query"):
        assert choice in error[0]


def test_did_you_mean_for_profiles_and_commands(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("research")
    config = write_config("profiles_dir: profiles\ndefault_profile: research\n")
    show = run_cli("--config", str(config), "profiles", "show", "reserch")
    assert show.returncode == 2 and "did you mean 'research'" in show.stderr
    allow = run_cli("--config", str(config), "allowlist", "list", "-p", "reserch")
    assert allow.returncode == 2 and "did you mean 'research'" in allow.stderr
    command = run_cli("profiles", "lst")
    assert command.returncode == 2 and "Did you mean 'list'" in command.stderr


def test_json_flags_are_shown_as_flags() -> None:
    for args in (("profiles", "list"), ("approvals", "test"), ("audit",), ("allowlist", "list")):
        helptext = run_cli(*args, "--help", env={"COLUMNS": "200"}).stdout
        assert "--json" in helptext or args == ("allowlist", "list") or "--json" in helptext
        assert "<bool>" not in helptext, args


def test_profiles_show_human_output_has_no_python_reprs(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "security:\n  redact_secrets: true\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli("--config", str(config), "profiles", "show", "p", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    words = set(re.findall(r"\b\w+\b", result.stdout))
    assert not words & {"True", "False", "None"}, result.stdout
    stamp = re.search(r"last_reload: (\S+)", result.stdout)
    assert stamp is not None and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", stamp.group(1)
    )
    as_json = json.loads(run_cli("--config", str(config), "profiles", "show", "p", "--json").stdout)
    assert as_json["schema_version"] == 1 and as_json["name"] == "p"


def test_profiles_init_refuses_bad_names_and_places(tmp_path: Path, write_config) -> None:  # type: ignore[no-untyped-def]
    config = write_config("profiles_dir: profiles\ndefault_profile: null\n")
    (tmp_path / "profiles").mkdir()
    for bad in ("", " ", "../evil", "a/b", ".", "..", ".hidden"):
        result = run_cli("--config", str(config), "profiles", "init", bad)
        assert result.returncode == 2, (bad, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["multiplex.yaml", "profiles"]
    assert list((tmp_path / "profiles").iterdir()) == []
    # Outside a project: refused, nothing created, unless --home DIR is given.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MULTIPLEX_CONFIG"}
    lost = run_cli("profiles", "init", "agent", cwd=elsewhere, env=env)
    assert lost.returncode == 2 and "multiplex.yaml" in lost.stderr
    assert list(elsewhere.iterdir()) == []
    made = run_cli("profiles", "init", "agent", "--home", str(elsewhere / "agent"), cwd=elsewhere)
    assert made.returncode == 0, made.stderr
    assert (elsewhere / "agent" / "config.yaml").is_file()
    assert "next steps" in made.stdout and "multiplex check" in made.stdout
    good = run_cli("--config", str(config), "profiles", "init", "fine")
    assert good.returncode == 0 and (tmp_path / "profiles" / "fine" / "config.yaml").is_file()


def test_profiles_init_refuses_a_symlink_out_of_profiles_dir(tmp_path: Path, write_config) -> None:  # type: ignore[no-untyped-def]
    config = write_config("profiles_dir: profiles\ndefault_profile: null\n")
    (tmp_path / "profiles").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "profiles" / "link").symlink_to(outside)
    result = run_cli("--config", str(config), "profiles", "init", "link")
    assert result.returncode == 2 and "outside profiles_dir" in result.stderr
    assert list(outside.iterdir()) == []


def _exec(config: Path, line: str) -> subprocess.Popen[str]:
    """``multiplex exec -p p -- LINE`` with every stream a pipe (stdin stays open, as a terminal's)."""
    return subprocess.Popen(
        [sys.executable, "-m", "multiplex", "--config", str(config), "exec", "-p", "p", "--", line],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_ctrl_c_at_the_prompt_is_recorded_as_cancelled(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", "")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    proc = _exec(config, "rm -rf ./never-removed")
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 60
    while "[o]nce" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.read(1)
    assert "[o]nce" in seen, seen
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)  # stdin stays open, as a terminal's does
    rest = proc.stderr.read()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.returncode == 5
    tail = [line for line in rest.splitlines() if line.strip()]
    assert len(tail) == 1 and "cancelled" in tail[0] and "interrupted" in tail[0], rest
    record = json.loads((home / "logs" / "decisions.jsonl").read_text().splitlines()[-1])
    assert (record["outcome"], record["cause"]) == ("cancelled", "interrupted")


def test_ctrl_c_while_the_command_runs_stops_it_and_says_interrupted(
    make_home, write_config
) -> None:  # type: ignore[no-untyped-def]
    # An odd duration names this test's sleep among every other process here.
    make_home("p", "command_allowlist: ['echo *', 'sleep *']\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    proc = _exec(config, "echo started; sleep 41.37")
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == "started\n"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    rest = proc.stderr.read()
    assert proc.returncode == 130, rest
    assert "multiplex: interrupted" in rest and "approval prompt" not in rest, rest
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", "sleep 41.37"], capture_output=True, text=True)
        if not left.stdout.strip():
            break
        time.sleep(0.1)
    assert not left.stdout.strip(), "the command outlived the interrupted exec"
