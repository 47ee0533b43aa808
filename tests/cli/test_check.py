"""docs/cli.md#check: ``multiplex check`` for CI, through the real CLI; and audit --json's completeness."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_good_config_passes_and_warnings_do_not_fail(make_home, write_config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    make_home("a", "command_allowlist: ['git status']\nsurprise: 1\n")
    make_home("b")
    config = write_config("profiles_dir: profiles\ndefault_profile: a\n")
    before = _tree(tmp_path)
    result = run_cli("--config", str(config), "check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 profile(s) checked, ok" in result.stdout
    assert "warning:" in result.stdout and "surprise" in result.stdout
    data = json.loads(run_cli("check", "--json", "--config", str(config)).stdout)
    assert data["schema_version"] == 1 and data["ok"] is True and data["errors"] == []
    assert data["profiles"] == ["a", "b"]
    assert any("surprise" in w["message"] for w in data["warnings"])
    assert _tree(tmp_path) == before  # checking writes nothing


def test_every_error_with_file_and_line(make_home, write_config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    make_home("good")
    bad_rules = make_home(
        "rules",
        "command_allowlist:\n  - git status\n  - \"git 'push\"\napprovals:\n  deny:\n    - '*'\n",
    )
    broken = make_home("broken", "approvals:\n  timeout: [1]\n")
    config = write_config(
        "profiles_dir: profiles\ndefault_profile: good\nroutes:\n"
        "  - {profile: good, platform: slack}\n  - {profile: ghost, platform: telegram}\n"
    )
    result = run_cli("--config", str(config), "check", "--json")
    assert result.returncode == 1
    errors = json.loads(result.stdout)["errors"]
    where = {(Path(e["file"]).name if e["file"] else None, e["line"], e["key"]) for e in errors}
    assert ("multiplex.yaml", 5, "routes.1.profile") in where
    assert ("config.yaml", 3, "command_allowlist.1") in where  # the unbalanced quote
    assert ("config.yaml", 6, "approvals.deny.0") in where  # "*" matches everything
    assert any(str(broken / "config.yaml") + ":2" in e["message"] for e in errors), errors
    text = run_cli("--config", str(config), "check")
    assert text.returncode == 1
    assert f"{bad_rules / 'config.yaml'}:3: command_allowlist.1:" in text.stdout
    assert "Traceback" not in text.stderr


def test_a_broken_multiplex_yaml_is_one_error(write_config) -> None:  # type: ignore[no-untyped-def]
    config = write_config("profiles_dir: profiles\nroutes: [\n")
    result = run_cli("--config", str(config), "check")
    assert result.returncode == 1 and "multiplex.yaml:" in result.stdout
    typo = write_config("profiles_dir: profiles\ndefault_profil: x\n")
    keyed = run_cli("--config", str(typo), "check")
    assert keyed.returncode == 1 and "did you mean 'default_profile'" in keyed.stdout


@pytest.mark.slow
def test_audit_json_reports_a_profile_it_could_not_audit(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("good", "terminal: {cwd: .}\n")
    make_home("broken", "command_allowlist: {not: a list}\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: good\n")
    result = run_cli("--config", str(config), "audit", "--json")
    assert result.returncode == 1, result.stderr[-2000:]
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["leaks"] == []
    assert [b["name"] for b in data["broken_profiles"]] == ["broken"]
    assert any("broken" in note for note in data["notes"])
    assert isinstance(data["skipped"], list)


def test_a_deny_rule_that_does_not_parse_makes_the_profile_an_error_once(
    make_home, write_config
) -> None:  # type: ignore[no-untyped-def]
    # It used to load "ok" while every decision of the profile failed on it.
    make_home("p", 'approvals: {deny: ["", "git push *"]}\n')
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli("--config", str(config), "check")
    assert result.returncode == 1
    out = " ".join((result.stdout + result.stderr).split())  # (long paths wrap)
    assert out.count("error:") == 1, out
    assert "approvals.deny.0: invalid rule '': empty rule" in out, out
    listed = run_cli("--config", str(config), "profiles", "list", "--json")
    assert '"status": "error"' in listed.stdout.replace('":"', '": "')


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_config_that_is_no_regular_file_is_an_error_not_a_hang(
    make_home, write_config, kind: str
) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", "")
    (home / "config.yaml").unlink()
    if kind == "fifo":
        os.mkfifo(home / "config.yaml")
    else:
        (home / "config.yaml").symlink_to("/dev/zero")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli("--config", str(config), "check")  # (run_cli gives up after 120 s)
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "not a regular file" in out and "Traceback" not in out


def test_an_unreadable_history_is_said_never_an_empty_one(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    # A decisions.jsonl that cannot be opened (here a folder: as root no mode stops a
    # read) printed "no decisions recorded" and policy diff "0 records": all clear.
    home = make_home("p", "")
    (home / "logs" / "decisions.jsonl").mkdir(parents=True)
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    listed = run_cli("--config", str(config), "decisions")
    assert "decisions.jsonl: cannot read the file" in listed.stderr, listed.stderr
    proposed = home.parent.parent / "proposed.yaml"
    proposed.write_text("approvals: {mode: strict}\n")
    diff = run_cli(
        "--config", str(config), "policy", "diff", "-p", "p", "--proposed", str(proposed)
    )
    assert "cannot read the file" in diff.stderr, diff.stderr
