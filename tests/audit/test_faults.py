"""Injected isolation faults: each one makes the audit fail and names its surface and profile.

Faults are extra surfaces registered by plugin functions in THIS module; the
audit calls them in the test process and every standalone probe imports them
through ``MULTIPLEX_AUDIT_PLUGINS`` (see docs/audit.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from multiplex.audit import PLUGINS_ENV, AuditReport, run_audit
from multiplex.scopes import ProfileScope, register_surface
from tests.audit import REPO
from tests.conftest import write_home

# -- the faults (plugin functions; module globals ARE the faults) -------------
_GLOBAL_CACHE: dict[str, Any] = {}
_FIRST: dict[str, Any] = {}


def _first(key: str, scope: ProfileScope, value: Any) -> Any:
    # "Whoever came first wins": the launch-profile bug of the field notes.
    return _FIRST.setdefault(key, value)


def fault_global_cache() -> None:
    """(1) A process-global cache shared by every profile."""
    _GLOBAL_CACHE.clear()

    def resolve(scope: ProfileScope) -> dict[str, Any]:
        _GLOBAL_CACHE.setdefault("env", dict(scope.env))
        return _GLOBAL_CACHE

    register_surface("fault_global_cache", resolve, render=lambda c: dict(c["env"]))


def fault_environ_write() -> None:
    """(2) A resolver that writes os.environ inside a turn."""

    def resolve(scope: ProfileScope) -> str:
        os.environ["MULTIPLEX_AUDIT_FAULT"] = scope.name  # the offending line
        return scope.name

    register_surface("fault_environ_write", resolve)


def fault_process_cwd() -> None:
    """(3) A cwd read from the process instead of the scope."""
    register_surface("fault_process_cwd", lambda scope: os.getcwd())


def fault_shared_allowlist() -> None:
    """(4) One allowlist store object for every profile."""
    _FIRST.pop("allowlist", None)
    register_surface(
        "fault_shared_allowlist",
        lambda scope: _first("allowlist", scope, scope.allowlist),
        render=lambda store: sorted(store.rules()),
    )


def fault_launch_credentials() -> None:
    """(5) The credential mount plan of the launch (first) profile for everyone."""
    _FIRST.pop("mounts", None)
    register_surface(
        "fault_launch_credentials",
        lambda scope: _first("mounts", scope, scope.credential_mounts),
        render=lambda ms: [{"source": str(m.source), "target": m.target} for m in ms],
    )


def fault_import_redaction() -> None:
    """(6) The redaction switch snapshotted once, from the first profile that asked."""
    _FIRST.pop("redact", None)
    register_surface(
        "fault_import_redaction", lambda scope: _first("redact", scope, scope.redact_secrets)
    )


def consistent_extra() -> None:
    """Not a fault: a new, correctly scoped surface (the audit must pick it up)."""
    register_surface("audit_extra", lambda scope: f"{scope.name}:{scope.backend}")


# -- fixtures -------------------------------------------------------------------


@pytest.fixture
def homes(tmp_path: Path) -> Path:
    """Three profiles that differ in redaction, credentials and backend."""
    root = tmp_path / "profiles"
    write_home(
        root,
        "alpha",
        "terminal: {credential_files: [credentials/a.key]}\nsecurity: {redact_secrets: true}\n",
        "ALPHA_TOKEN=alpha-secret-value-1234\n",
        {"credentials/a.key": "alpha-key-material-000111\n"},
    )
    write_home(
        root,
        "beta",
        "security: {redact_secrets: false}\ncommand_allowlist: ['git status']\n",
        "BETA_TOKEN=beta-secret-value-5678\n",
    )
    write_home(
        root,
        "gamma",
        "terminal: {backend: docker, cwd: /workspace}\napprovals: {mode: strict}\n",
        "MULTIPLEX_REDACT_SECRETS=off\n",
    )
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: alpha\n")
    return config


def audit_with(plugin: str, config: Path, monkeypatch: pytest.MonkeyPatch) -> AuditReport:
    monkeypatch.setenv(PLUGINS_ENV, f"{__name__}:{plugin}")
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # so the probes can import this module
    return run_audit(config, jobs=3)


def assert_names(report: AuditReport, surface: str, at_least: int = 1) -> set[str]:
    """The audit failed, and a divergence or a leak names ``surface`` and a served profile."""
    assert not report.ok and report.exit_code == 1
    assert report.as_dict()["ok"] is False
    assert not [x for x in report.leaks if x.kind == "error"], "every probe must have answered"
    bad = {r.profile for r in report.divergences if r.surface == surface}
    assert len(bad) >= at_least, report.verdict
    assert bad <= set(report.profiles)
    return bad


# -- the tests ------------------------------------------------------------------
@pytest.mark.slow
def test_process_global_cache(homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = assert_names(
        audit_with("fault_global_cache", homes, monkeypatch), "fault_global_cache", at_least=2
    )
    assert len(bad) >= 2  # all but the profile that filled the cache


@pytest.mark.slow
def test_global_cache_leaks_canaries(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = audit_with("fault_global_cache", homes, monkeypatch)
    leaks = [x for x in report.leaks if x.kind == "surface" and x.surface == "fault_global_cache"]
    assert leaks, "the first profile's canaries must be seen in the others' surface"
    assert all(x.source != x.profile and x.source in report.profiles for x in leaks)
    assert all("canary-" not in x.detail for x in leaks)  # labels, never canary values


@pytest.mark.slow
def test_environ_write_is_an_isolation_leak(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = audit_with("fault_environ_write", homes, monkeypatch)
    assert not report.ok
    found = [x for x in report.leaks if x.kind == "isolation"]
    assert {x.profile for x in found} == set(report.profiles)
    assert all(x.surface == "os.environ" and "fault_environ_write" in x.detail for x in found)
    assert all(x.location and x.location.startswith(__file__ + ":") for x in found)
    assert "MULTIPLEX_AUDIT_FAULT" not in os.environ  # the hook stopped the write


@pytest.mark.slow
def test_process_cwd_read(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The audit's own cwd is not any probe's cwd (probes start in their home).
    monkeypatch.chdir(tmp_path)
    assert_names(
        audit_with("fault_process_cwd", homes, monkeypatch), "fault_process_cwd", at_least=3
    )


@pytest.mark.slow
def test_shared_allowlist_object(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_names(
        audit_with("fault_shared_allowlist", homes, monkeypatch),
        "fault_shared_allowlist",
        at_least=2,
    )


@pytest.mark.slow
def test_launch_profile_credentials(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_names(
        audit_with("fault_launch_credentials", homes, monkeypatch),
        "fault_launch_credentials",
        at_least=2,
    )


@pytest.mark.slow
def test_redaction_switch_snapshot(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # alpha is on, beta and gamma are off: whichever profile came first, some differ.
    assert_names(audit_with("fault_import_redaction", homes, monkeypatch), "fault_import_redaction")


@pytest.mark.slow
def test_new_surface_is_audited_with_no_other_change(
    homes: Path, registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = audit_with("consistent_extra", homes, monkeypatch)
    rows = [r for r in report.rows if r.surface == "audit_extra"]
    assert {r.profile for r in rows} == {"alpha", "beta", "gamma"}
    assert all(r.match for r in rows) and report.ok, (report.verdict, report.leaks)
    assert {r.multiplexed for r in rows} == {"alpha:local", "beta:local", "gamma:docker"}
