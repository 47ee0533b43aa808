"""Reloads on the live stream (docs/gateway.md#server-sent-events): ``config.reloaded`` and
``profile.reloaded``, so a dashboard shows a refused multiplex.yaml or a broken home at once.

Real files, the real watcher (inotify) and a real gateway on loopback.
"""

from __future__ import annotations

from typing import Any

from tests.gateway.conftest import Gateway, SseReader

# docs/configuration.md#validation: a typo that would drop the section is an error.
SECTION_TYPO = "\naprovals:\n  mode: 'off'\n"
MISTYPED = "gatway:\n  port: 1\n"  # an operator's typo: refused, the last good config serves


def _config(name: str, data: dict[str, Any]) -> bool:
    return name == "config.reloaded"


def test_a_refused_multiplex_yaml_is_announced_and_so_is_its_fix(gateway: Gateway) -> None:
    source = gateway.sup.config.source
    assert source is not None
    good = source.read_text()
    with gateway.admin.client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        source.write_text(good + MISTYPED)  # the watcher reloads it: no request
        _, refused = events.until(_config)
        assert refused["ok"] is False
        assert "gatway" in refused["error"]
        assert set(gateway.sup.profiles) == set(gateway.homes)  # the last good config serves
        source.write_text(good)
        _, applied = events.until(_config)
    assert applied == {"ok": True, "error": None, "restart_required": []}


def test_the_reload_request_announces_its_outcome_too(gateway: Gateway) -> None:
    source = gateway.sup.config.source
    assert source is not None
    with gateway.admin.client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        assert gateway.admin.post("/v1/admin/reload").json()["ok"] is True
        _, applied = events.until(_config)
    assert applied["ok"] is True


def test_a_broken_home_is_announced_to_those_who_see_it(gateway: Gateway) -> None:
    alpha_config = gateway.homes["alpha"] / "config.yaml"
    good = alpha_config.read_text()
    with gateway.profile["alpha"].client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        # beta's reload first: alpha's token must never see it
        beta_config = gateway.homes["beta"] / "config.yaml"
        beta_config.write_text(beta_config.read_text() + SECTION_TYPO)
        gateway.sup.reload("beta")
        alpha_config.write_text(good + SECTION_TYPO)
        _, broken = events.until(lambda n, d: n == "profile.reloaded")
        assert broken["profile"] == "alpha"
        assert broken["status"] == "error"
        assert "aprovals: unknown section" in broken["error"]
        alpha_config.write_text(good)
        _, fixed = events.until(lambda n, d: n == "profile.reloaded" and d["status"] != "error")
        assert fixed["profile"] == "alpha"
        assert "error" not in fixed
    assert all(d.get("profile") in ("alpha", None) for _n, d in events.seen), events.seen


def test_a_profile_token_sees_the_config_event_without_other_profiles_names(
    gateway: Gateway,
) -> None:
    """What /readyz already tells anyone: whether multiplex.yaml applied, and why not."""
    source = gateway.sup.config.source
    assert source is not None
    good = source.read_text()
    with gateway.profile["beta"].client() as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        source.write_text(good + MISTYPED)
        _, refused = events.until(_config)
        source.write_text(good)
        events.until(_config)
    assert set(refused) == {"ok", "error", "restart_required"}
    assert refused["ok"] is False
