"""docs/approvals.md#modes: the shipped examples are strict where it matters, `profiles init --mode`,
and the README's revocation has an effect. Through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]


def _verdict(cwd: Path, profile: str, command: str, context: str = "api") -> dict:  # type: ignore[type-arg]
    result = run_cli(
        "approvals", "test", "-p", profile, "--context", context, "--json", "--", command, cwd=cwd
    )
    assert result.returncode == 0, result.stderr
    verdict: dict = json.loads(result.stdout)  # type: ignore[type-arg]
    return verdict


@pytest.mark.parametrize(
    ("profile", "command", "outcome"),
    [
        # ops: production changes ask (blocked with nobody to ask), reads run.
        ("ops", "kubectl apply -f prod.yaml", "ask"),
        ("ops", "systemctl restart nginx", "ask"),
        ("ops", "git push origin main", "ask"),
        ("ops", "journalctl -u nginx --since today", "approved"),
        ("ops", "kubectl get pods -n web", "approved"),
        ("ops", "kubectl delete pod web-1", "blocked"),
        ("ci-bot", "make test", "approved"),
        ("ci-bot", "curl https://example.test/x", "ask"),
        ("ci-bot", "docker push registry/app", "blocked"),
    ],
)
def test_the_shipped_examples_decide_as_documented(
    profile: str, command: str, outcome: str
) -> None:
    assert _verdict(REPO, profile, command)["outcome"] == outcome


def test_unattended_ops_turns_never_change_production() -> None:
    for command in (
        "kubectl apply -f prod.yaml",
        "systemctl restart nginx",
        "git push origin main",
    ):
        verdict = _verdict(REPO, "ops", command, context="cron")
        assert verdict["outcome"] == "blocked" and "unattended" in verdict["cause"]


def test_the_readme_revocation_takes_effect(tmp_path: Path) -> None:
    shutil.copytree(REPO / "profiles", tmp_path / "profiles")
    shutil.copy(REPO / "multiplex.yaml", tmp_path / "multiplex.yaml")
    assert _verdict(tmp_path, "ops", "journalctl -u nginx")["outcome"] == "approved"
    removed = run_cli("allowlist", "remove", "-p", "ops", "journalctl *", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert _verdict(tmp_path, "ops", "journalctl -u nginx")["outcome"] == "ask"


def test_profiles_init_takes_a_mode_or_says_which_it_chose(tmp_path: Path) -> None:
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    strict = run_cli("profiles", "init", "deployer", "--mode", "strict", cwd=tmp_path)
    assert strict.returncode == 0, strict.stderr
    assert "approvals.mode: strict" in strict.stdout
    assert "  mode: strict " in (tmp_path / "profiles/deployer/config.yaml").read_text()
    assert _verdict(tmp_path, "deployer", "ls -la")["outcome"] == "ask"
    # Not on a terminal and no --mode: manual, and it says so and how to choose.
    plain = run_cli("profiles", "init", "helper", cwd=tmp_path, stdin="")
    assert plain.returncode == 0, plain.stderr
    assert "approvals.mode: manual" in plain.stdout and "--mode strict" in plain.stdout
    assert _verdict(tmp_path, "helper", "ls -la")["outcome"] == "approved"
    bad = run_cli("profiles", "init", "x", "--mode", "sometimes", cwd=tmp_path)
    assert bad.returncode == 2 and "manual" in bad.stderr and "strict" in bad.stderr
