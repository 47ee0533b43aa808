"""docs/cli.md: ``multiplex profiles list|show|init`` and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from multiplex.profiles import parse_dotenv
from tests.conftest import REPO, run_cli

LIST_FIELDS = {
    "schema_version",
    "allowlist_invalid",
    "name",
    "home",
    "backend",
    "cwd",
    "redact_secrets",
    "allowlist_size",
    "status",
    "error",
    "sandbox",  # docs/execution.md#the-sandbox: bwrap, none, or null for other backends
    "sandbox_warning",
    "serving_last_good_since",  # docs/cli.md: a broken profile still serving its last good config
}


def test_list_json_on_the_example_config() -> None:
    result = run_cli("--config", str(REPO / "multiplex.yaml"), "profiles", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {r["name"] for r in rows} >= {"default", "research", "ci-bot", "ops"}
    assert all(set(r) == LIST_FIELDS for r in rows)
    by = {r["name"]: r for r in rows}
    assert by["ci-bot"]["backend"] == "docker" and by["ci-bot"]["redact_secrets"] is False
    assert by["ci-bot"]["sandbox"] is None and by["research"]["sandbox"] in ("bwrap", "none")
    assert by["research"]["cwd"].endswith("profiles/research/workspace")
    assert all(r["status"] == "ok" for r in rows)


def test_broken_profile_is_listed_with_its_error(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("good")
    make_home("bad", "approvals:\n  timeout: [1]\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: good\n")
    result = run_cli("--config", str(config), "profiles", "list", "--json")
    assert result.returncode == 1  # a broken profile fails the listing (CI can rely on it)
    bad = next(r for r in json.loads(result.stdout) if r["name"] == "bad")
    assert bad["status"] == "error" and "approvals.timeout" in bad["error"]
    table = run_cli("--config", str(config), "profiles", "list")
    assert "bad" in table.stdout and "error" in table.stdout and table.returncode == 1


def test_show_masks_secrets(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "p",
        "terminal:\n  env: {DB_PASSWORD: hunter2-literal-pw, MODE: fast}\n  env_passthrough: [API_KEY]\n",
        env="API_KEY=sk-live-secret-value-777\n",
    )
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli("--config", str(config), "profiles", "show", "p", "--json")
    assert result.returncode == 0, result.stderr
    assert (
        "hunter2-literal-pw" not in result.stdout
        and "sk-live-secret-value-777" not in result.stdout
    )
    data = json.loads(result.stdout)
    assert data["settings"]["terminal"]["env"]["MODE"] == "fast"
    assert data["command_env"]["API_KEY"].startswith("[REDACTED")


def test_init_creates_a_home_that_loads(tmp_path: Path, write_config) -> None:  # type: ignore[no-untyped-def]
    config = write_config("profiles_dir: profiles\ndefault_profile: null\n")
    result = run_cli("--config", str(config), "profiles", "init", "newbie")
    assert result.returncode == 0, result.stderr
    home = tmp_path / "profiles" / "newbie"
    assert (home / "config.yaml").read_text().startswith("# Profile home config")
    assert (home / ".env").stat().st_mode & 0o777 == 0o600
    # docs/security.md#tokens-and-ids: its own random gateway token, and it says where.
    token = parse_dotenv((home / ".env").read_text())["MULTIPLEX_TOKEN"]
    assert len(token) >= 24 and f"MULTIPLEX_TOKEN in {home / '.env'}" in result.stdout
    listed = json.loads(run_cli("--config", str(config), "profiles", "list", "--json").stdout)
    assert listed[0]["name"] == "newbie" and listed[0]["status"] == "ok"
    again = run_cli("--config", str(config), "profiles", "init", "newbie")
    assert again.returncode == 2 and "already exists" in again.stderr


def test_config_errors_exit_2_with_one_line(tmp_path: Path, write_config) -> None:  # type: ignore[no-untyped-def]
    bad = write_config("profiles_dir: profiles\nroutes: {not: a list}\n")
    result = run_cli("--config", str(bad), "profiles", "list")
    assert result.returncode == 2
    assert (
        result.stderr.count("\n") == 1
        and "multiplex.yaml" in result.stderr
        and "routes" in result.stderr
    )
    assert "Traceback" not in result.stderr
    missing = run_cli("--config", str(tmp_path / "nope.yaml"), "profiles", "list")
    assert missing.returncode == 2 and "file not found" in missing.stderr
    usage = run_cli("profiles", "frobnicate")
    assert usage.returncode == 2


def test_standalone_mode_serves_one_profile() -> None:
    result = run_cli(
        "--config", str(REPO / "multiplex.yaml"), "-p", "research", "profiles", "list", "--json"
    )
    assert result.returncode == 0, result.stderr
    assert [r["name"] for r in json.loads(result.stdout)] == ["research"]


def test_python_dash_m_and_help() -> None:
    result = run_cli("--help")
    assert result.returncode == 0 and "profiles" in result.stdout and "allowlist" in result.stdout
