"""docs/multiplexing.md#the-model: optional strict isolation — turns may not change process-wide state."""

from __future__ import annotations

import os

import pytest

from multiplex import IsolationViolation


def test_strict_turn_cannot_write_environ_or_chdir(make_home, supervisor_of, tmp_path) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    sup = supervisor_of(strict=True)
    before_cwd = os.getcwd()
    with sup.turn("a"):
        with pytest.raises(IsolationViolation, match=r"os\.environ"):
            os.environ["MULTIPLEX_STRICT_PROBE"] = "1"
        with pytest.raises(IsolationViolation, match="cwd"):
            os.chdir(tmp_path)
        with pytest.raises(IsolationViolation):
            os.putenv("MULTIPLEX_STRICT_PROBE", "1")
        assert os.environ.get("MULTIPLEX_TEST_READ", "read is fine") == "read is fine"
    assert "MULTIPLEX_STRICT_PROBE" not in os.environ
    assert os.getcwd() == before_cwd
    # Outside a turn the hook does nothing.
    os.environ["MULTIPLEX_STRICT_PROBE"] = "1"
    del os.environ["MULTIPLEX_STRICT_PROBE"]


def test_non_strict_supervisor_does_not_interfere(make_home, supervisor_of, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    sup = supervisor_of()
    with sup.turn("a"):
        monkeypatch.setenv("MULTIPLEX_NON_STRICT", "1")
    assert os.environ["MULTIPLEX_NON_STRICT"] == "1"
