"""docs/security.md#tokens-and-ids: short tokens refused, revoked tokens end streams, random ids."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import httpx
import pytest

from multiplex import ConfigError, Supervisor
from multiplex.gateway import GatewayServer, create_app
from multiplex.profiles import Profile
from tests.gateway.conftest import Api, Gateway, SseReader


def test_a_token_shorter_than_24_characters_is_a_profile_error(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("")
    (tmp_path / ".env").write_text("A=1\nMULTIPLEX_TOKEN=abc\n")
    profile = Profile("p", tmp_path)
    assert profile.reload().result == "error"
    error = profile.error or ""
    assert ".env:2: MULTIPLEX_TOKEN: shorter than 24 characters; refused" in error
    assert "abc" not in error.split("MULTIPLEX_TOKEN")[1]
    (tmp_path / ".env").write_text("MULTIPLEX_TOKEN=" + "x" * 24 + "\n")
    assert profile.reload().result == "ok"


def test_a_short_token_is_refused_live_and_its_old_token_stops(gateway: Gateway) -> None:
    (gateway.homes["alpha"] / ".env").write_text("MULTIPLEX_TOKEN=abc\n")
    gateway.sup.reload("alpha")
    assert gateway.sup.profiles["alpha"].status == "error"
    assert gateway.as_token("abc").get("/v1/whoami").status_code == 401


def test_a_short_admin_token_is_refused(supervisor_of, make_home) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "")
    with pytest.raises(ConfigError, match="shorter than 24"):
        create_app(supervisor_of(), admin_token="admin")


def _stream_ends_after(gateway: Gateway, path: str, change: str) -> float:
    """Open ``path`` as alpha's SSE stream, rotate or remove the token; seconds until it ends."""
    alpha = gateway.profile["alpha"]
    env = gateway.homes["alpha"] / ".env"
    with alpha.client(timeout=10) as c, c.stream("GET", path) as response:
        events = SseReader(response).connected()
        env.write_text(change)  # the watcher (polling, 20 ms debounce) reloads it
        started = time.monotonic()
        while events.next() is not None:
            pass  # e.g. a keepalive or an event racing the reload
        return time.monotonic() - started


@pytest.mark.parametrize(
    "change",
    ["", f"MULTIPLEX_TOKEN=alpha-rotated-{'r' * 24}\n"],
    ids=["removed", "rotated"],
)
def test_a_revoked_token_ends_its_event_stream(gateway: Gateway, change: str) -> None:
    # The stream ends (the server closes it) instead of carrying events; the bound is
    # generous for a loaded machine: the promise measured in bench is "within a second".
    assert _stream_ends_after(gateway, "/v1/events", change) < 10
    assert gateway.profile["alpha"].get("/v1/whoami").status_code == 401


def test_a_revoked_token_ends_its_run_stream_and_wait(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    run_id, _ = alpha.parked(["echo waits-for-a-human"])
    outcome: dict[str, httpx.Response] = {}

    def waiting() -> None:
        with alpha.client(timeout=30) as c:
            outcome["wait"] = c.post("/v1/runs", json={"commands": ["echo two"], "wait": 25})

    waiter = threading.Thread(target=waiting)
    waiter.start()
    try:
        assert _stream_ends_after(gateway, f"/v1/runs/{run_id}/events", "") < 10
    finally:
        waiter.join(30)
    assert outcome["wait"].status_code == 401  # not 202 after 25 s
    gateway.admin.post(f"/v1/runs/{run_id}/cancel")


def test_other_tokens_streams_are_not_ended(gateway: Gateway) -> None:
    beta = gateway.profile["beta"]
    with beta.client(timeout=10) as c, c.stream("GET", "/v1/events") as response:
        events = SseReader(response).connected()
        (gateway.homes["alpha"] / ".env").write_text("")
        deadline = time.monotonic() + 10
        while gateway.profile["alpha"].get("/v1/whoami").status_code != 401:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        run_id = beta.submit(["echo beta-still-here"])
        events.until(lambda n, d: n == "approval.request" and d["run_id"] == run_id)
        beta.post(f"/v1/runs/{run_id}/cancel")


def test_approval_ids_are_random_96_bits(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    ids = []
    for _ in range(3):
        run_id, pending = alpha.parked(["echo which-id"])
        ids.append(pending["approval_id"])
        alpha.post(f"/v1/runs/{run_id}/cancel")
    for approval_id in ids:
        match = re.fullmatch(r"ap-([0-9a-f]+)", approval_id)
        assert match is not None and len(match.group(1)) * 4 >= 96, approval_id
    # No shared prefix or counter: consecutive ids differ in their first characters.
    assert len({i[3:9] for i in ids}) == 3


def test_a_route_to_another_profile_reads_like_an_unknown_route(
    make_home, write_config, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    a_token, b_token = "a" * 12 + "-token-0123456789", "b" * 12 + "-token-0123456789"
    make_home("research", "approvals: {mode: strict}\n", env=f"MULTIPLEX_TOKEN={b_token}\n")
    make_home("mine", "approvals: {mode: strict}\n", env=f"MULTIPLEX_TOKEN={a_token}\n")
    config = write_config(
        "profiles_dir: profiles\ndefault_profile: null\nwatch: {mode: 'off'}\n"
        "routes:\n  - {profile: research, platform: telegram}\n"
    )
    sup = Supervisor.from_config(config)
    server = GatewayServer(sup, admin_token="admin-" + "z" * 24, port=0, grace=1.0).start()
    try:
        mine = Api(server.url.rstrip("/"), a_token)
        other = mine.post(
            "/v1/runs", json={"commands": ["true"], "route": {"platform": "telegram"}}
        )
        unknown = mine.post("/v1/runs", json={"commands": ["true"], "route": {"platform": "irc"}})
        assert other.status_code == unknown.status_code == 404
        assert other.json() == unknown.json()
        assert "research" not in other.text
        named = mine.post("/v1/runs", json={"commands": ["true"], "profile": "research"})
        nobody = mine.post("/v1/runs", json={"commands": ["true"], "profile": "zeta"})
        assert named.status_code == nobody.status_code == 404
        assert named.json()["detail"].replace("research", "X") == nobody.json()["detail"].replace(
            "zeta", "X"
        )
    finally:
        server.stop()
        sup.close()
