"""docs/audit.md, docs/kernels.md#isolation: the audit's session-kernel check, with real kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.audit import _kernel_leaks
from multiplex.audit._kernel_leaks import check_kernels
from multiplex.audit._sandbox import build_sandbox
from tests.conftest import write_home


def test_a_kernel_started_with_another_profiles_values_is_a_leak(tmp_path: Path) -> None:
    root = tmp_path / "profiles"
    write_home(root, "a", "terminal: {cwd: .}\n")
    write_home(root, "b", "terminal: {cwd: .}\n")
    write_home(root, "c", "terminal: {cwd: .}\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: a\n")
    sandbox = build_sandbox(config)
    try:
        a = sandbox.canaries["a"]
        home_b = sandbox.homes["b"]
        text = (home_b / "config.yaml").read_text()
        (home_b / "config.yaml").write_text(
            text.replace("terminal:", f"terminal:\n  env: {{STOLEN: {a.mark}}}", 1)
        )
        sup = Supervisor.from_config(sandbox.config, strict=True)
        try:
            found = check_kernels(sup, ["a", "b", "c"], sandbox.canaries)
            assert len(sup.kernels) == 0  # the audit's kernels end with the check
        finally:
            sup.close()
    finally:
        sandbox.remove()
    (leak,) = found["b"].leaks
    assert leak.kind == "kernel" and leak.source == "a" and a.mark not in leak.detail
    assert found["a"].leaks == [] and found["c"].leaks == []
    assert all(not check.notes for check in found.values())


def test_kernel_checks_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_kernel_leaks, "KERNEL_SAMPLE", 1)
    root = tmp_path / "profiles"
    for name in ("a", "b", "c"):
        write_home(root, name, "")
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: a\n")
    sandbox = build_sandbox(config)
    try:
        sup = Supervisor.from_config(sandbox.config, strict=True)
        try:
            found = check_kernels(sup, ["a", "b", "c"], sandbox.canaries)
        finally:
            sup.close()
    finally:
        sandbox.remove()
    assert list(found) == ["a"]
    assert found["a"].notes == [
        "kernel checks ran for 1 of 3 profiles (at most 1); not checked: b, c"
    ]
