"""The dashboard's profiles panel pages and searches, in a real headless Chromium (docs/gateway.md#the-dashboard)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from multiplex import Supervisor
from tests.conftest import HomeFactory
from tests.gateway.test_dashboard import (  # noqa: F401  (fixtures)
    ADMIN_TOKEN,
    Gateway,
    browser,
    expect,
    page,
    sign_in,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
HOMES = 120  # 50 a page: three pages, the last one short


@pytest.fixture
def fleet(make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]) -> Iterator[Gateway]:
    uvicorn = pytest.importorskip("uvicorn")
    from multiplex.gateway import create_app

    homes = {
        f"{'ops' if i % 3 == 0 else 'dev'}-{i:03d}": make_home(
            f"{'ops' if i % 3 == 0 else 'dev'}-{i:03d}", "approvals: {mode: strict}\n"
        )
        for i in range(HOMES)
    }
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: null\nwatch: {mode: off}\n")
    app = create_app(sup, admin_token=ADMIN_TOKEN)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), "uvicorn to start", 15)
    try:
        yield Gateway(f"http://127.0.0.1:{port}", sup, homes)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def _names(tab: Any) -> list[str]:
    rows = tab.get_by_test_id("profile-row")
    return [rows.nth(i).get_attribute("data-profile") for i in range(rows.count())]


def test_the_profiles_panel_pages_through_every_profile(fleet: Gateway, page: Any) -> None:  # noqa: F811
    sign_in(page, fleet, ADMIN_TOKEN)
    rows = page.get_by_test_id("profile-row")
    expect(rows).to_have_count(50)
    expect(page.get_by_test_id("profiles-total")).to_have_text(str(HOMES))
    expect(page.get_by_test_id("profiles-range")).to_have_text(f"1–50 of {HOMES}")
    expect(page.get_by_test_id("profiles-prev")).to_be_disabled()
    seen = _names(page)
    page.get_by_test_id("profiles-next").click()
    expect(page.get_by_test_id("profiles-range")).to_have_text(f"51–100 of {HOMES}")
    seen += _names(page)
    page.get_by_test_id("profiles-next").click()
    expect(page.get_by_test_id("profiles-range")).to_have_text(f"101–{HOMES} of {HOMES}")
    expect(rows).to_have_count(HOMES - 100)
    expect(page.get_by_test_id("profiles-next")).to_be_disabled()
    seen += _names(page)
    assert seen == list(fleet.sup.profiles)  # every profile once, in serving order
    page.get_by_test_id("profiles-prev").click()
    expect(page.get_by_test_id("profiles-range")).to_have_text(f"51–100 of {HOMES}")
    assert not page.errors


def test_searching_narrows_the_profiles_on_the_server(fleet: Gateway, page: Any) -> None:  # noqa: F811
    sign_in(page, fleet, ADMIN_TOKEN)
    page.get_by_test_id("profiles-next").click()
    expect(page.get_by_test_id("profiles-range")).to_have_text(f"51–100 of {HOMES}")
    page.get_by_test_id("profiles-search").fill("OPS-")
    ops = [n for n in fleet.sup.profiles if n.startswith("ops-")]
    # A new search starts at its first page.
    expect(page.get_by_test_id("profiles-total")).to_have_text(str(len(ops)))
    expect(page.get_by_test_id("profiles-range")).to_have_text(f"1–{len(ops)} of {len(ops)}")
    assert _names(page) == ops
    page.get_by_test_id("profiles-search").fill("ops-003")
    expect(page.get_by_test_id("profile-row")).to_have_count(1)
    expect(page.locator('[data-testid="profile-row"][data-profile="ops-003"]')).to_be_visible()
    page.get_by_test_id("profiles-search").fill("nothing-like-this")
    expect(page.get_by_test_id("profile-row")).to_have_count(0)
    expect(page.get_by_test_id("profiles-range")).to_have_text("none")
    page.get_by_test_id("profiles-search").fill("")
    expect(page.get_by_test_id("profile-row")).to_have_count(50)
    assert not page.errors
