"""docs/configuration.md#profile-home: a profile's .env is parsed, never loaded into os.environ."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from multiplex._errors import ProfileConfigError
from multiplex.profiles import parse_dotenv


def test_forms() -> None:
    text = (
        "# comment\n"
        "A=1\n"
        "export B=two\n"
        "C='single $NOT expanded'\n"
        'D="line\\nbreak"\n'
        "E=value # trailing comment\n"
        'F="multi\nline"\n'
        "G=\n"
        "H=a=b=c\n"
    )
    env = parse_dotenv(text)
    assert env == {
        "A": "1",
        "B": "two",
        "C": "single $NOT expanded",
        "D": "line\nbreak",
        "E": "value",
        "F": "multi\nline",
        "G": "",
        "H": "a=b=c",
    }


@pytest.mark.parametrize("bad", ["not an assignment", "1ABC=x", "A='unterminated", "=value"])
def test_bad_lines_name_file_and_line(bad: str, tmp_path: Path) -> None:
    with pytest.raises(ProfileConfigError) as info:
        parse_dotenv("OK=1\n" + bad + "\n", file=tmp_path / ".env")
    assert f"{tmp_path / '.env'}:2" in str(info.value)


def test_dotenv_never_reaches_os_environ(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a", "", env="MULTIPLEX_TEST_ONLY_IN_DOTENV=from-dotenv\n")
    sup = supervisor_of()
    assert "MULTIPLEX_TEST_ONLY_IN_DOTENV" not in os.environ
    with sup.turn("a") as scope:
        assert "MULTIPLEX_TEST_ONLY_IN_DOTENV" not in scope.env  # not passed through
    assert "MULTIPLEX_TEST_ONLY_IN_DOTENV" not in os.environ


def test_process_variable_does_not_override_profile_value(
    make_home, supervisor_of, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SHARED_NAME", "from-process")
    make_home("a", "terminal:\n  env_passthrough: [SHARED_NAME]\n", env="SHARED_NAME=from-a\n")
    make_home("b", "terminal:\n  env: {SHARED_NAME: from-b-config}\n")
    make_home("c", "")
    sup = supervisor_of()
    with sup.turn("a") as scope:
        assert scope.env["SHARED_NAME"] == "from-a"
    with sup.turn("b") as scope:
        assert scope.env["SHARED_NAME"] == "from-b-config"
    with sup.turn("c") as scope:
        assert "SHARED_NAME" not in scope.env  # never the rest of the process environment
