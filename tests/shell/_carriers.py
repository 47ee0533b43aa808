"""What the carrier rounds share: a strict home allowlisting the attacker's programs and a
manual home with no rules, and the gate's outcome and hardline check for a line."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from multiplex import Supervisor
from multiplex.shell import Place, find_dangers, find_hardline, find_protected_write, parse_line
from tests.conftest import write_home

BLOCKED, ASK, APPROVED = "blocked", "ask", "approved"
# A manual profile's home and workspace, beside the supervisor's own home /root.
HOME = "/srv/mx/profiles/manual"
PLACE = Place(cwd=HOME + "/workspace", homes=("/root", HOME))


def judged(line: str) -> list[str]:
    """The patterns the gate names for ``line`` at :data:`PLACE`, and ``protected-file``
    for a write to AGENTS.md."""
    parsed = parse_line(line)
    named = [f.pattern.name for f in find_dangers(parsed, PLACE)]
    protected = find_protected_write(parsed, ("AGENTS.md",))
    return named + ([protected.pattern.name] if protected is not None else [])


def table_tests(
    hostile: Sequence[tuple[str, str]], nothing: Sequence[str]
) -> tuple[Callable[[str, str], None], Callable[[str], None]]:
    """The two tests each round's tables share: every hostile line names its pattern,
    every plain sibling names none. Assign them to ``test_…`` names in the round's module."""

    @pytest.mark.parametrize(("line", "pattern"), hostile)
    def names_its_danger(line: str, pattern: str) -> None:
        assert pattern in judged(line), (line, judged(line))

    @pytest.mark.parametrize("line", nothing)
    def names_nothing(line: str) -> None:
        assert judged(line) == [], (line, judged(line))

    return names_its_danger, names_nothing


def hardline_tests(
    hardline: Sequence[str], not_hardline: Sequence[str]
) -> tuple[Callable[[str], None], Callable[[str], None]]:
    """Each line of ``hardline`` is blocked as hardline; none of ``not_hardline`` is."""

    @pytest.mark.parametrize("line", hardline)
    def is_hardline(line: str) -> None:
        assert find_hardline(parse_line(line)) is not None, line

    @pytest.mark.parametrize("line", not_hardline)
    def is_not_hardline(line: str) -> None:
        assert find_hardline(parse_line(line)) is None, line

    return is_hardline, is_not_hardline


FILES = {"work/README.md": "x\n"}


def one_home(root: Path, config: str) -> Supervisor:
    """A supervisor serving one profile ``p`` under ``root`` whose config.yaml is ``config``."""
    home = root / "profiles" / "p"
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(config)
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\n")
    return Supervisor.from_config(root / "multiplex.yaml")


def write_strict_and_manual(root: Path, allow: list[str]) -> Path:
    """``profiles/strict`` (mode strict, ``allow``) and ``profiles/manual`` under ``root``,
    both working in ``work/``, and the ``multiplex.yaml`` serving them; its path."""
    strict = {
        "approvals": {"mode": "strict"},
        "command_allowlist": allow,
        "terminal": {"cwd": "work"},
    }
    write_home(root / "profiles", "strict", yaml.safe_dump(strict), files=FILES)
    manual = {"terminal": {"cwd": "work"}}
    write_home(root / "profiles", "manual", yaml.safe_dump(manual), files=FILES)
    config = root / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: null\n")
    return config


def homes_fixture(name: str, allow: list[str]) -> Any:
    """A module fixture: a supervisor serving :func:`write_strict_and_manual`'s two homes."""

    @pytest.fixture(scope="module")
    def sup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
        root = tmp_path_factory.mktemp(name)
        with Supervisor.from_config(write_strict_and_manual(root, allow)) as supervisor:
            yield supervisor

    return sup


def outcome(sup: Supervisor, profile: str, line: str, context: str = "api") -> str:
    return sup.test(profile, line, context=context).outcome.value


def assert_hardline(sup: Supervisor, line: str) -> None:
    """Blocked in both homes, by the hardline step (not another profile's home)."""
    for profile in ("strict", "manual"):
        verdict = sup.test(profile, line, context="api")
        assert verdict.outcome.value == BLOCKED, (profile, verdict.cause)
        assert verdict.trace[-1].step == "hardline", verdict.cause


def assert_in_both(sup: Supervisor, line: str, expected: str) -> None:
    """The same outcome in the strict home and the manual one."""
    assert outcome(sup, "strict", line) == expected
    assert outcome(sup, "manual", line) == expected


def assert_no_danger(sup: Supervisor, line: str) -> None:
    """Approved in the manual home with no danger named."""
    verdict = sup.test("manual", line, context="api")
    assert verdict.outcome.value == APPROVED and not verdict.dangers, verdict.dangers


def assert_named(
    sup: Supervisor, line: str, pattern: str, profiles: tuple[str, ...] = ("manual",)
) -> None:
    """Asked about in each of ``profiles``, with ``pattern`` among the dangers named."""
    for profile in profiles:
        verdict = sup.test(profile, line, context="api")
        assert verdict.outcome.value == ASK, (profile, verdict.cause)
        named = [d.pattern for d in verdict.dangers]
        assert pattern in named, (profile, named)
