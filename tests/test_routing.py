"""docs/configuration.md#supervisor-config-multiplexyaml: routing specificity, all-fields-match, unserved routes refused at load."""

from __future__ import annotations

import pytest

from multiplex import ConfigError, RoutingError, Supervisor

CONFIG = """\
profiles_dir: profiles
default_profile: general
routes:
  - {profile: tg, platform: telegram}
  - {profile: tg-user, platform: telegram, user_id: "u1"}
  - {profile: tg-chat, platform: telegram, chat_id: 123}
  - {profile: tg-thread, platform: telegram, chat_id: "123", thread_id: "t9"}
  - {profile: any-chat-7, chat_id: "7"}
  - {profile: hooks, platform: webhook}
"""
NAMES = ["general", "tg", "tg-user", "tg-chat", "tg-thread", "any-chat-7", "hooks"]


@pytest.fixture
def sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    for name in NAMES:
        make_home(name)
    return supervisor_of(CONFIG)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ({"platform": "telegram"}, "tg"),
        ({"platform": "telegram", "user_id": "u1"}, "tg-user"),
        ({"platform": "telegram", "user_id": "u1", "chat_id": "123"}, "tg-chat"),  # chat beats user
        ({"platform": "telegram", "user_id": "u1", "chat_id": 123, "thread_id": "t9"}, "tg-thread"),
        (
            {"platform": "telegram", "chat_id": "123", "thread_id": "other"},
            "tg-chat",
        ),  # all fields must match
        ({"platform": "slack", "chat_id": "7"}, "any-chat-7"),
        ({"platform": "telegram", "chat_id": "7"}, "any-chat-7"),  # chat beats platform
        ({"platform": "webhook", "user_id": "x"}, "hooks"),
        ({"platform": "discord"}, "general"),
        ({}, "general"),
    ],
)
def test_most_specific_route_wins(sup: Supervisor, origin: dict[str, str], expected: str) -> None:
    assert sup.route(**origin) == expected


def test_route_to_unserved_profile_is_a_config_error(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    with pytest.raises(ConfigError) as info:
        supervisor_of(
            "profiles_dir: profiles\ndefault_profile: a\nroutes:\n  - {profile: ghost, platform: x}\n"
        )
    assert "routes.0.profile" in str(info.value) and "ghost" in str(info.value)
    assert "multiplex.yaml" in str(info.value)


def test_null_default_refuses_unrouted_turns(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    sup = supervisor_of(
        "profiles_dir: profiles\ndefault_profile: null\nroutes:\n  - {profile: a, platform: x}\n"
    )
    assert sup.route(platform="x") == "a"
    with pytest.raises(RoutingError):
        sup.route(platform="y")
    with pytest.raises(RoutingError):
        sup.turn().__enter__()


def test_explicit_default_must_be_served(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    with pytest.raises(ConfigError, match="default_profile"):
        supervisor_of("profiles_dir: profiles\ndefault_profile: nobody\n")


def test_unknown_supervisor_key_is_an_error(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    with pytest.raises(ConfigError, match="rootes: unknown key"):
        supervisor_of("profiles_dir: profiles\nrootes: []\n")


def test_config_selection(tmp_path, make_home, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    alt = tmp_path / "alt.yaml"
    alt.write_text(f"profiles_dir: {tmp_path / 'profiles'}\ndefault_profile: a\n")
    monkeypatch.setenv("MULTIPLEX_CONFIG", str(alt))
    monkeypatch.chdir(tmp_path)
    assert sorted(Supervisor.from_config().profiles) == ["a"]
    with pytest.raises(ConfigError, match="file not found"):
        Supervisor.from_config(tmp_path / "missing.yaml")


def test_explicit_profiles_list(tmp_path, make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    make_home("b")
    extra = tmp_path / "elsewhere" / "x"
    extra.mkdir(parents=True)
    (extra / "config.yaml").write_text("")
    sup = supervisor_of(
        f"profiles_dir: profiles\ndefault_profile: a\nprofiles: [a, {extra}, {{name: renamed, home: profiles/b}}]\n"
    )
    assert sorted(sup.profiles) == ["a", "renamed", "x"]
