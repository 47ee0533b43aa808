"""The bypass corpora through the whole gate: disguises never slip past a bypass."""

from __future__ import annotations

import pytest
import yaml

from multiplex import Supervisor
from tests.shell.test_detection import DENY_CASES, HARDLINE_LINES, ORDINARY_LINES

BYPASSES = {
    "yolo": "approvals:\n  yolo: true\n",
    "mode-off": "approvals:\n  mode: 'off'\n",
    "container": "terminal:\n  backend: docker\n",
}


@pytest.fixture(scope="module")
def sups(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Supervisor]:
    from tests.conftest import write_home

    root = tmp_path_factory.mktemp("corpus")
    deny = sorted({rule for rule, _ in DENY_CASES})
    for name, base in BYPASSES.items():
        approvals = yaml.safe_load(base).get("approvals", {})
        approvals["deny"] = deny
        doc = {
            **yaml.safe_load(base),
            "approvals": approvals,
            "command_allowlist": ["git *", "ls *"],
        }
        write_home(root / "profiles", name, yaml.safe_dump(doc))
    write_home(root / "profiles", "manual", "")
    config = root / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: null\n")
    sup = Supervisor.from_config(config)
    return {name: sup for name in (*BYPASSES, "manual")}


@pytest.mark.parametrize("bypass", sorted(BYPASSES))
def test_every_hardline_disguise_is_blocked_through_every_bypass(
    sups: dict[str, Supervisor], bypass: str
) -> None:
    sup = sups[bypass]
    missed = [
        line
        for line in HARDLINE_LINES
        if sup.test(bypass, line, context="api").outcome != "blocked"
    ]
    assert not missed, missed[:10]


@pytest.mark.parametrize("bypass", sorted(BYPASSES))
def test_every_deny_disguise_is_blocked_through_every_bypass(
    sups: dict[str, Supervisor], bypass: str
) -> None:
    sup = sups[bypass]
    missed = []
    for _rule, line in DENY_CASES:
        verdict = sup.test(bypass, line, context="api")
        if verdict.outcome != "blocked":
            missed.append(line)
    assert not missed, missed[:10]


def test_ordinary_commands_are_not_flagged_by_the_gate(sups: dict[str, Supervisor]) -> None:
    sup = sups["manual"]
    flagged = [
        line
        for line in ORDINARY_LINES
        if sup.test("manual", line, context="api").outcome != "approved"
    ]
    assert not flagged, flagged[:10]
    assert len(ORDINARY_LINES) >= 100 and len(HARDLINE_LINES) + len(DENY_CASES) >= 150
