"""The isolation audit passes on honest homes and finds canaries where they must not be (docs/audit.md)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.audit import run_audit
from multiplex.audit._canaries import MARK_VAR, TOKEN_VAR
from multiplex.audit._leaks import check_profile
from multiplex.audit._runner import resolve_concurrently
from multiplex.audit._sandbox import build_sandbox
from tests.audit import REPO, generate_homes, run_multiplex
from tests.conftest import write_home

ROW_KEYS = {"surface", "profile", "multiplexed", "standalone", "match"}
LEAK_KEYS = {"kind", "profile", "surface", "detail", "source", "side", "location"}


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` (and symlink target) with its content digest and mode."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() + oct(path.stat().st_mode)
        else:
            out[rel] = "dir"
    return out


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "profiles", tmp_path / "profiles", symlinks=True)
    shutil.copy(REPO / "multiplex.yaml", tmp_path / "multiplex.yaml")
    return tmp_path / "multiplex.yaml"


@pytest.mark.slow
def test_examples_pass_through_the_real_cli(examples: Path, tmp_path: Path) -> None:
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    before = tree_digest(examples.parent)
    done = run_multiplex(
        "--config", str(examples), "audit", "--json", env={"TMPDIR": str(private_tmp)}
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert set(data) == {
        "schema_version", "ok", "surfaces", "leaks", "notes", "skipped", "broken_profiles",
    }  # fmt: skip
    assert data["ok"] is True and data["leaks"] == [] and data["broken_profiles"] == []
    assert {r["profile"] for r in data["surfaces"]} == {"default", "research", "ci-bot", "ops"}
    assert all(set(r) == ROW_KEYS and r["match"] is True for r in data["surfaces"])
    assert {"cwd", "env", "allowlist", "credential_mounts", "redact_secrets"} <= {
        r["surface"] for r in data["surfaces"]
    }
    # Secrets are masked in the values; the operator's files are untouched; the sandbox is gone.
    assert "research-search-key-example-7f3a9c" not in done.stdout
    assert "canary-tok-" not in done.stdout
    assert tree_digest(examples.parent) == before
    assert list(private_tmp.iterdir()) == []


@pytest.mark.slow
def test_terminal_report_and_html(examples: Path, tmp_path: Path) -> None:
    page = tmp_path / "audit.html"
    done = run_multiplex("--config", str(examples), "audit", "--html", str(page))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "AUDIT PASSED" in done.stdout and "surfaces × profiles" in done.stdout
    assert "AUDIT PASSED" in page.read_text()


@pytest.mark.slow
def test_two_dozen_generated_homes_pass(tmp_path: Path) -> None:
    # Enough for each of the generator's backends, modes and rarer cases (a linked
    # credential, a legacy allowlist, a missing passthrough) to occur more than once.
    count = 24
    config = generate_homes(tmp_path, count)
    before = tree_digest(tmp_path / "profiles")
    report = run_audit(config)
    assert report.ok, [r for r in report.divergences][:5] + list(report.leaks)[:5]
    assert len(report.profiles) == count and not report.skipped
    assert len(report.rows) == count * len(report.surfaces)
    assert report.turns >= count * 4  # every profile had several concurrent turns
    assert tree_digest(tmp_path / "profiles") == before
    # Varied on purpose: the values really differ between profiles.
    by_surface = {
        s: {json.dumps(r.multiplexed, sort_keys=True) for r in report.rows if r.surface == s}
        for s in report.surfaces
    }
    assert len(by_surface["backend"]) == 6 and len(by_surface["redact_secrets"]) == 2
    assert len(by_surface["cwd"]) > 5 and len(by_surface["approval_mode"]) == 4


def test_probe_by_hand_prints_no_secret_and_writes_nothing(examples: Path) -> None:
    home = examples.parent / "profiles" / "research"
    before = tree_digest(home)
    done = run_multiplex(
        "--config", str(examples), "-p", "research", "audit", "--probe", "--json", cwd=home
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["profile"] == "research" and set(data["surfaces"]) == set(data["digests"])
    assert data["surfaces"]["cwd"] == str(home / "workspace")
    assert "research-search-key-example-7f3a9c" not in done.stdout  # masked
    assert data["notes"] and "canary checks skipped" in data["notes"][0]
    assert tree_digest(home) == before


def test_broken_profile_is_not_audited_and_fails_the_verdict(tmp_path: Path) -> None:
    root = tmp_path / "profiles"
    write_home(root, "good", "terminal: {cwd: .}\n", "GOOD_TOKEN=good-secret-value-77\n")
    write_home(root, "broken", "command_allowlist: {not: a list}\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: good\n")
    report = run_audit(config)
    assert report.profiles == ("good",) and not report.divergences and not report.leaks
    assert "broken" in report.skipped and any("broken" in n for n in report.notes)
    # A profile that could not be audited is not a pass (docs/cli.md#exit-codes).
    assert not report.ok and report.exit_code == 1 and "INCOMPLETE" in report.verdict
    data = report.as_dict()
    assert data["ok"] is False and data["broken_profiles"][0]["name"] == "broken"
    assert "command_allowlist" in data["broken_profiles"][0]["error"]


def test_sandbox_copies_with_canaries(tmp_path: Path) -> None:
    config = generate_homes(tmp_path, 8)
    sandbox = build_sandbox(config)
    try:
        assert oct(sandbox.root.stat().st_mode & 0o777) == "0o700"
        sup = Supervisor.from_config(sandbox.config)
        for name, canary in sandbox.canaries.items():
            view = sup.view(name)
            assert view.home.is_relative_to(sandbox.root)
            assert view.env[TOKEN_VAR] == canary.token and view.env[MARK_VAR] == canary.mark
            assert canary.rule in sup.allowlist(name).rules()
            assert any(m.relative == canary.cred_relative for m in view.credential_mounts)
        assert len({c.token for c in sandbox.canaries.values()}) == 8
        sup.close()
    finally:
        sandbox.remove()
    assert not sandbox.root.exists()


def test_leak_checks_find_foreign_canaries(tmp_path: Path) -> None:
    root = tmp_path / "profiles"
    write_home(root, "a", "terminal: {cwd: .}\n")
    write_home(root, "b", "terminal: {cwd: .}\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: a\n")
    sandbox = build_sandbox(config)
    try:
        a, b = sandbox.canaries["a"], sandbox.canaries["b"]
        home_b = sandbox.homes["b"]
        # Plant A's canaries where B can see them: B's cache dir, B's decisions
        # log, B's allowlist (a gate leak) and B's command env.
        (home_b / "cache" / "lsp").mkdir(parents=True)
        (home_b / "cache" / "lsp" / "index").write_text(f"stale {a.mark}\n")
        (home_b / "logs" / "decisions.jsonl").write_text(json.dumps({"command": a.program}) + "\n")
        text = (
            (home_b / "config.yaml")
            .read_text()
            .replace("command_allowlist:", f"command_allowlist:\n- {a.rule}", 1)
        )
        text = text.replace("terminal:", f"terminal:\n  env: {{STOLEN: {a.mark}}}", 1)
        (home_b / "config.yaml").write_text(text)
        sup = Supervisor.from_config(sandbox.config, strict=True)
        try:
            renders = resolve_concurrently(sup, ["a", "b"], rounds=2)
            found_b = check_profile(sup, "b", renders.values["b"], sandbox.canaries)
            found_a = check_profile(sup, "a", renders.values["a"], sandbox.canaries)
        finally:
            sup.close()
    finally:
        sandbox.remove()
    kinds = {x.kind for x in found_b.leaks}
    assert {"surface", "env", "output", "cache", "decisions_log", "gate"} <= kinds, kinds
    assert all(x.profile == "b" and x.source == "a" for x in found_b.leaks)
    assert not any(b.mark in x.detail or a.mark in x.detail for x in found_b.leaks)
    assert found_a.leaks == []  # nothing of B was planted in A
    assert renders.unstable == {} and renders.violations == []
