"""``GET /v1/profiles`` pages: limit, offset, search, X-Total-Count, Link (docs/gateway.md#profiles-decisions-identity)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator

import pytest

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from tests.conftest import write_home
from tests.gateway.conftest import ADMIN, Api

COUNT = 230


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, Api, Supervisor]]:
    root = tmp_path_factory.mktemp("fleet")
    for i in range(COUNT):
        env = f"MULTIPLEX_TOKEN=fleet-token-{i:04d}-abcdefghijklmnop\n"
        config = "approvals: {mode: strict}\n" if i != 7 else "command_allowlist: {bad: shape}\n"
        write_home(root / "profiles", f"team-{'red' if i % 2 else 'blue'}-{i:04d}", config, env)
    (root / "multiplex.yaml").write_text(
        textwrap.dedent("profiles_dir: profiles\ndefault_profile: null\nwatch: {mode: off}\n")
    )
    sup = Supervisor.from_config(root / "multiplex.yaml")
    server = GatewayServer(sup, admin_token=ADMIN, port=0, grace=1.0).start()
    base = server.url.rstrip("/")
    try:
        yield Api(base, ADMIN), Api(base, "fleet-token-0003-abcdefghijklmnop"), sup
    finally:
        server.stop()
        sup.close()


def _next(link: str | None) -> str | None:
    if link is None:
        return None
    match = re.fullmatch(r'<(/v1/profiles\?[^>]*)>; rel="next"', link)
    assert match, link
    return match.group(1)


def test_the_default_page_is_100_and_the_link_walks_every_profile(fleet) -> None:  # type: ignore[no-untyped-def]
    admin, _, sup = fleet
    first = admin.get("/v1/profiles")
    assert first.status_code == 200
    assert first.headers["X-Total-Count"] == str(COUNT)
    assert len(first.json()) == 100
    seen = [p["name"] for p in first.json()]
    path = _next(first.headers.get("Link"))
    while path is not None:
        page = admin.get(path)
        seen += [p["name"] for p in page.json()]
        path = _next(page.headers.get("Link"))
    assert seen == list(sup.profiles)  # every profile once, in serving order
    broken = next(p for p in admin.get("/v1/profiles", params={"q": "0007"}).json())
    assert broken["status"] == "error" and broken["error"]


def test_limit_offset_and_search(fleet) -> None:  # type: ignore[no-untyped-def]
    admin, _, _ = fleet
    page = admin.get("/v1/profiles", params={"limit": 5, "offset": 10})
    everything = [p["name"] for p in admin.get("/v1/profiles", params={"limit": 1000}).json()]
    assert [p["name"] for p in page.json()] == everything[10:15]
    red = admin.get("/v1/profiles", params={"q": "RED", "limit": 1000})
    assert red.headers["X-Total-Count"] == str(COUNT // 2)
    assert all("-red-" in p["name"] for p in red.json())
    assert "Link" not in red.headers
    searched = admin.get("/v1/profiles", params={"q": "red", "limit": 50})
    assert "q=red" in searched.headers["Link"]
    past = admin.get("/v1/profiles", params={"offset": 10_000})
    assert past.json() == [] and past.headers["X-Total-Count"] == str(COUNT)


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 1001}, {"offset": -1}, {"q": "x" * 201}]
)
def test_bad_page_parameters_are_422(fleet, params) -> None:  # type: ignore[no-untyped-def]
    admin, _, _ = fleet
    assert admin.get("/v1/profiles", params=params).status_code == 422


def test_a_profile_token_pages_only_its_own_profile(fleet) -> None:  # type: ignore[no-untyped-def]
    _, own, _ = fleet
    r = own.get("/v1/profiles", params={"q": "team"})
    assert r.headers["X-Total-Count"] == "1"
    assert [p["name"] for p in r.json()] == ["team-red-0003"]
    # The count never reveals other profiles.
    assert own.get("/v1/profiles", params={"q": "blue"}).headers["X-Total-Count"] == "0"
