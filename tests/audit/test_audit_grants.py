"""The audit's sandbox copy of a config keeps its grants as mappings (docs/allowlist.md#grants)."""

from __future__ import annotations

from pathlib import Path

import yaml

from multiplex.audit._canaries import make_canaries
from multiplex.audit._sandbox import _config_with_canaries
from multiplex.profiles import parse_config

CONFIG = b"command_allowlist:\n  - git status\n  - {rule: 'npm run *', uses: 2}\n"


def test_a_config_with_a_grant_is_copied_with_the_grant_and_the_canary() -> None:
    settings = parse_config(CONFIG, file=Path("config.yaml")).settings
    canary = make_canaries("p")
    copied = _config_with_canaries(CONFIG, settings, canary)
    entries = yaml.safe_load(copied)["command_allowlist"]
    assert entries[:2] == ["git status", {"rule": "npm run *", "uses": 2}]
    assert canary.rule in entries
    again = parse_config(copied.encode(), file=Path("copy.yaml")).settings
    assert again.command_allowlist[1] == settings.command_allowlist[1]
