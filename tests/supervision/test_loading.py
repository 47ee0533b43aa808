"""Loading many homes: the collector held off and given back, homes found in one read."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from multiplex import ConfigError, Supervisor


def _fleet(tmp_path: Path, extra: str = "") -> Path:
    profiles = tmp_path / "profiles"
    for name in ("a", "b"):
        (profiles / name).mkdir(parents=True)
        (profiles / name / "config.yaml").write_text("command_allowlist: ['git status']\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text(f"profiles_dir: profiles\ndefault_profile: null\n{extra}")
    return config


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was_found(tmp_path: Path, enabled: bool) -> None:
    config = _fleet(tmp_path)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        Supervisor.from_config(config).close()
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_the_collector_is_given_back_when_the_load_fails(tmp_path: Path) -> None:
    config = _fleet(tmp_path, "routes:\n  - {platform: x, profile: nobody}\n")
    assert gc.isenabled()
    with pytest.raises(ConfigError, match="nobody"):
        Supervisor.from_config(config)
    assert gc.isenabled()


def test_homes_are_served_at_their_resolved_paths(tmp_path: Path) -> None:
    config = _fleet(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.yaml").write_text("{}\n")
    os.symlink(elsewhere, tmp_path / "profiles" / "linked")
    (tmp_path / "profiles" / "no-config").mkdir()
    (tmp_path / "profiles" / "a-file").write_text("x")
    sup = Supervisor.from_config(config)
    try:
        homes = {name: profile.home for name, profile in sup.profiles.items()}
    finally:
        sup.close()
    assert list(homes) == ["a", "b", "linked"]
    assert homes["linked"] == elsewhere.resolve()
    assert homes["a"] == (tmp_path / "profiles" / "a").resolve()


@pytest.mark.parametrize(
    ("profiles", "why"),
    [
        ("[profiles/research, {name: research, home: profiles/ops}]", "listed twice"),
        ("[research, research]", "listed twice"),
        ("[{name: a, home: profiles/ops}, {name: b, home: profiles/ops}]", "share the home"),
        ("['', ops]", "must not be empty"),
        ("[{name: 'a/b', home: profiles/ops}]", "no path separators"),
        ("[{name: 'ops ', home: profiles/ops}]", "no space at its ends"),
        ('[{name: "o\\tps", home: profiles/ops}]', "no space at its ends"),
        ("[.hidden]", "no leading dot"),
    ],
)
def test_a_profiles_list_that_would_mix_homes_refuses_to_load(
    tmp_path: Path, profiles: str, why: str
) -> None:
    # Last entry winning served the ops home (strict, its credentials) under research's
    # name; two names for one home share what isolation keeps apart.
    for name in ("research", "ops"):
        (tmp_path / "profiles" / name).mkdir(parents=True)
        (tmp_path / "profiles" / name / "config.yaml").write_text("{}\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text(f"default_profile: null\nprofiles: {profiles}\n")
    with pytest.raises(ConfigError) as raised:
        Supervisor.from_config(config).close()
    message = str(raised.value)
    assert why in message and "profiles" in message and "multiplex.yaml" in message
    assert "\n" not in message


def test_distinct_names_and_homes_load(tmp_path: Path) -> None:
    for name in ("research", "ops"):
        (tmp_path / "profiles" / name).mkdir(parents=True)
        (tmp_path / "profiles" / name / "config.yaml").write_text("{}\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text(
        "default_profile: null\nprofiles: [research, {name: ops2, home: profiles/ops}]\n"
    )
    with Supervisor.from_config(config) as sup:
        assert sorted(sup.profiles) == ["ops2", "research"]
