"""The approvals dashboard (docs/gateway.md `GET /`) driven in a real headless Chromium.

A real uvicorn server serves the real app over real profile homes; the test
submits runs over HTTP, and answers them by clicking in the page. No browser is
downloaded: Debian's ``chromium`` is driven through Playwright's
``executable_path`` (``make test`` installs it with apt).
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from multiplex import Supervisor
from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.conftest import HomeFactory

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

WAIT_MS = 15_000  # every wait in the browser is bounded
# How often the page re-reads profiles and the config status, from the page itself.
PROFILES_EVERY_S = (
    int(
        re.search(
            r"PROFILES_EVERY_MS = (\d+)",
            (Path(__file__).parents[2] / "multiplex/gateway/static/dashboard.js").read_text(),
        )[1]  # type: ignore[index]
    )
    / 1000
)
ADMIN_TOKEN = "dash-admin-3f9a1c-0123456789"
ALPHA_TOKEN = "alpha-token-7d21e0-0123456789"
BETA_TOKEN = "beta-token-51c8aa-0123456789"

# approvals.timeout is short so a failing test never leaves a run parked for long.
PARKING_CONFIG = """\
terminal:
  cwd: work
approvals:
  mode: manual
  timeout: 60
"""


@dataclass(frozen=True)
class Gateway:
    """A live server: its base URL, the supervisor behind it and the homes."""

    url: str
    sup: Supervisor
    homes: dict[str, Path]

    def client(self, token: str = ADMIN_TOKEN) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=10
        )


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    """Poll ``predicate`` until it returns something truthy, at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def gateway(make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]) -> Iterator[Gateway]:
    """Real homes, a real supervisor, the real app in a real uvicorn on loopback."""
    uvicorn = pytest.importorskip("uvicorn")
    try:
        from multiplex.gateway import create_app
    except ImportError as exc:  # the HTTP API is a sibling module; say what is missing
        pytest.fail(f"multiplex.gateway.create_app is not importable: {exc}")

    homes = {
        "alpha": make_home(
            "alpha",
            PARKING_CONFIG,
            env=f"MULTIPLEX_TOKEN={ALPHA_TOKEN}\n",
            files={"work/scratch/keep.txt": "x\n"},
        ),
        "beta": make_home(
            "beta",
            PARKING_CONFIG,
            env=f"MULTIPLEX_TOKEN={BETA_TOKEN}\n",
            files={"work/scratch/keep.txt": "x\n"},
        ),
        # docs/configuration.md#configyaml-keys: a malformed shape is an error; the dashboard lists it with its message.
        "broken": make_home("broken", "command_allowlist: {git: status}\n"),
    }
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: null\n")
    app = create_app(sup, admin_token=ADMIN_TOKEN)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="uvicorn", daemon=True
    )
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), "uvicorn to start", 15)
    assert server.started, "uvicorn did not start (see the log above)"
    try:
        yield Gateway(f"http://127.0.0.1:{port}", sup, homes)
    finally:
        # Unblock every parked run before stopping the server.
        sup.gate.cancel_all("test ended")
        server.should_exit = True
        thread.join(15)
        sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # read by the tests: no uncaught script error is allowed
    try:
        yield page
    finally:
        context.close()


def sign_in(page: Any, gw: Gateway, token: str, live: str = "live") -> None:
    page.goto(gw.url + "/")
    page.get_by_test_id("token-input").fill(token)
    page.get_by_test_id("sign-in").click()
    expect(page.get_by_test_id("whoami")).to_be_visible()
    # "live": the SSE stream is open; from here on the page updates without reloading.
    expect(page.get_by_test_id("live-status")).to_have_text(live)


def submit(gw: Gateway, profile: str, command: str, session: str = "s1") -> str:
    with gw.client() as http:
        body = {"profile": profile, "session_id": session, "context": "api", "commands": [command]}
        response = http.post("/v1/runs", json=body)
    assert response.status_code == 202, response.text
    run_id: str = response.json()["run_id"]
    return run_id


def run_state(gw: Gateway, run_id: str) -> dict[str, Any]:
    with gw.client() as http:
        response = http.get(f"/v1/runs/{run_id}")
    assert response.status_code == 200, response.text
    state: dict[str, Any] = response.json()
    return state


def wait_status(gw: Gateway, run_id: str, *statuses: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        state = run_state(gw, run_id)
        return state if state["status"] in statuses else None

    result: dict[str, Any] = wait_for(done, f"run {run_id} to reach {statuses}")
    return result


def expect(locator: Any) -> Any:
    """Playwright's ``expect`` with the bounded wait of this file."""
    from playwright.sync_api import expect as pw_expect

    pw_expect.set_options(timeout=WAIT_MS)
    return pw_expect(locator)


def test_admin_approves_once_live_and_sees_the_decision(
    gateway: Gateway, page: Any, tmp_path: Path
) -> None:
    sign_in(page, gateway, ADMIN_TOKEN)

    # Profiles panel: every served profile, the broken one with its error text.
    rows = page.get_by_test_id("profile-row")
    expect(rows).to_have_count(3)
    broken = page.locator('[data-testid="profile-row"][data-profile="broken"]')
    expect(broken.get_by_test_id("profile-status")).to_contain_text("error")
    broken_error = page.locator('[data-error-of="broken"]').get_by_test_id("profile-error")
    expect(broken_error).to_contain_text("command_allowlist")
    alpha_row = page.locator('[data-testid="profile-row"][data-profile="alpha"]')
    expect(alpha_row).to_contain_text("ok")
    expect(alpha_row).to_contain_text("local")

    # Marker that a reload would wipe: the card must arrive live.
    page.evaluate("window.__sameDocument = true")
    expect(page.get_by_test_id("approval-card")).to_have_count(0)
    scratch = gateway.homes["alpha"] / "work" / "scratch"
    run_id = submit(gateway, "alpha", "rm -rf ./scratch")
    wait_status(gateway, run_id, "waiting_for_approval")

    card = page.get_by_test_id("approval-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("approval-command")).to_have_text("rm -rf ./scratch")
    expect(card.get_by_test_id("approval-profile")).to_have_text("alpha")
    expect(card.get_by_test_id("approval-session")).to_have_text("s1")
    expect(card.get_by_test_id("time-left")).to_contain_text("left")
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    assert scratch.exists(), "the command ran before anyone approved it"
    page.screenshot(path=str(tmp_path / "pending.png"), full_page=True)

    card.get_by_test_id("approve-once").click()
    expect(card).to_have_count(0)
    expect(page.get_by_test_id("toast").first).to_contain_text("Approved once")

    state = wait_status(gateway, run_id, "completed", "failed", "cancelled")
    assert state["status"] == "completed", state
    decision = state["results"][0]["decision"]
    assert (decision["outcome"], decision["decided_by"]) == ("approved", "user"), decision
    assert state["results"][0]["exit_code"] == 0
    assert not scratch.exists(), "approved command did not run"

    approved = page.locator('[data-testid="decision-row"][data-outcome="approved"]')
    expect(approved.first).to_contain_text("rm -rf ./scratch")
    expect(approved.first.get_by_test_id("decision-by")).to_have_text("user")
    expect(approved.first.get_by_test_id("decision-outcome")).to_have_text("approved")

    # A request withdrawn elsewhere leaves the page live, and is "not answered",
    # never "denied" (docs/approvals.md#outcomes-and-what-the-agent-sees).
    other = submit(gateway, "beta", "rm -rf ./scratch", session="s2")
    expect(page.get_by_test_id("approval-card")).to_have_count(1)
    with gateway.client() as http:
        assert http.post(f"/v1/runs/{other}/cancel").status_code == 200
    expect(page.get_by_test_id("approval-card")).to_have_count(0)
    expect(page.get_by_test_id("toasts")).to_contain_text("Not answered")
    withdrawn = page.locator('[data-testid="decision-row"][data-outcome="cancelled"]')
    expect(withdrawn.first.get_by_test_id("decision-outcome")).to_have_text("not answered")
    expect(page.get_by_test_id("decisions-table")).not_to_contain_text("denied")
    assert (gateway.homes["beta"] / "work" / "scratch").exists()

    shot = tmp_path / "dashboard.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000, "screenshot is suspiciously small (blank page?)"
    assert page.errors == []


def test_profile_token_sees_only_its_own_and_denies_with_a_reason(
    gateway: Gateway, page: Any, tmp_path: Path
) -> None:
    # Markup in a command must be shown as text, never parsed (docs/redaction.md, docs/gateway.md).
    hostile = 'rm -rf "./scratch/<b id=injected>x</b><img src=x onerror=window.__xss=1>"'
    mine = submit(gateway, "alpha", hostile)
    theirs = submit(gateway, "beta", "rm -rf ./scratch")
    wait_status(gateway, mine, "waiting_for_approval")
    wait_status(gateway, theirs, "waiting_for_approval")

    page.goto(gateway.url + "/")
    page.get_by_test_id("token-input").fill("not-a-token")
    page.get_by_test_id("token-input").press("Enter")
    expect(page.get_by_test_id("sign-in-error")).to_contain_text("not accepted")
    assert page.evaluate("sessionStorage.length") == 0

    sign_in(page, gateway, ALPHA_TOKEN)
    expect(page.get_by_test_id("whoami")).to_contain_text("alpha")
    cards = page.get_by_test_id("approval-card")
    expect(cards).to_have_count(1)
    expect(cards).to_have_attribute("data-profile", "alpha")
    expect(page.get_by_test_id("profile-row")).to_have_count(1)
    expect(page.get_by_test_id("profile-row")).to_have_attribute("data-profile", "alpha")
    expect(page.locator("[data-profile='beta']")).to_have_count(0)

    command = cards.get_by_test_id("approval-command")
    expect(command).to_contain_text("<b id=injected>x</b>")
    assert page.locator("#injected").count() == 0
    assert page.evaluate("window.__xss === undefined")

    # Keyboard only: type the reason, Tab to Deny, press Enter.
    cards.get_by_test_id("deny-reason").fill("not on a Friday")
    cards.get_by_test_id("deny-reason").press("Tab")
    expect(cards.get_by_test_id("deny")).to_be_focused()
    page.keyboard.press("Enter")
    expect(cards).to_have_count(0)

    state = wait_status(gateway, mine, "completed", "failed", "cancelled")
    assert state["status"] != "completed", state
    decision = state["results"][0]["decision"]
    assert (decision["outcome"], decision["decided_by"]) == ("denied", "user"), decision
    assert "not on a Friday" in decision["cause"]
    assert state["results"][0]["exit_code"] is None
    assert (gateway.homes["alpha"] / "work" / "scratch" / "keep.txt").exists()

    denied = page.locator('[data-testid="decision-row"][data-outcome="denied"]')
    expect(denied.first.get_by_test_id("decision-outcome")).to_have_text("denied")
    expect(denied.first.get_by_test_id("decision-cause")).to_contain_text("not on a Friday")

    # Beta's request was never shown to alpha and is still waiting for beta.
    assert run_state(gateway, theirs)["status"] == "waiting_for_approval"
    with gateway.client(BETA_TOKEN) as http:
        open_for_beta = http.get("/v1/approvals", params={"state": "open"}).json()
    assert [a["profile"] for a in open_for_beta] == ["beta"]

    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("token-input")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0
    page.screenshot(path=str(tmp_path / "signed-out.png"))
    assert page.errors == []


def test_without_the_event_stream_the_page_polls_and_reconnects(
    gateway: Gateway, page: Any
) -> None:
    # A proxy that breaks long-lived responses: the stream fails at once.
    page.route("**/v1/events", lambda route: route.abort())
    sign_in(page, gateway, ADMIN_TOKEN, live="polling every 2 s")

    page.evaluate("window.__sameDocument = true")
    run_id = submit(gateway, "beta", "rm -rf ./scratch")
    card = page.get_by_test_id("approval-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("approval-command")).to_have_text("rm -rf ./scratch")
    card.get_by_test_id("approve-once").click()
    expect(card).to_have_count(0)
    state = wait_status(gateway, run_id, "completed", "failed", "cancelled")
    assert state["results"][0]["decision"]["outcome"] == "approved", state
    assert not (gateway.homes["beta"] / "work" / "scratch").exists()

    # The stream comes back: the page returns to live updates by itself.
    page.unroute("**/v1/events")
    expect(page.get_by_test_id("live-status")).to_have_text("live")
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    assert page.errors == []


# -- docs/security.md#the-dashboard-and-http-headers --------------------------------


def test_every_response_carries_the_security_headers(gateway: Gateway) -> None:
    with gateway.client() as http, gateway.client("not-a-token-at-all-xxxxxxxx") as anon:
        responses = {
            "page": http.get("/"),
            "script": http.get("/static/dashboard.js"),
            "api": http.get("/v1/whoami"),
            "fast path": http.post(
                "/v1/runs", json={"profile": "alpha", "commands": ["true"], "context": "api"}
            ),
            "unauthorised": anon.get("/v1/profiles"),
            "not found": http.get("/static/nope.js"),
        }
        docs = http.get("/docs")
    for what, response in responses.items():
        headers = response.headers
        csp = headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, what
        assert "frame-ancestors 'none'" in csp, what
        assert headers.get("x-frame-options") == "DENY", what
        assert headers.get("referrer-policy") == "no-referrer", what
        assert headers.get("x-content-type-options") == "nosniff", what
    assert docs.headers.get("x-frame-options") == "DENY"
    assert "content-security-policy" not in docs.headers  # FastAPI's page needs inline script


def test_the_token_lives_in_page_memory_unless_remembered(gateway: Gateway, page: Any) -> None:
    page.add_init_script(
        "window.__csp = [];"
        "document.addEventListener('securitypolicyviolation',"
        " (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    sign_in(page, gateway, ADMIN_TOKEN)  # the page works under its CSP: its script ran
    assert page.evaluate("sessionStorage.length") == 0
    assert page.evaluate("localStorage.length") == 0
    assert ADMIN_TOKEN not in page.evaluate("document.cookie")
    page.reload()  # memory only: a reload signs out
    expect(page.get_by_test_id("token-input")).to_be_visible()
    expect(page.get_by_test_id("whoami")).to_be_hidden()

    page.get_by_test_id("token-input").fill(ADMIN_TOKEN)
    page.get_by_test_id("remember").check()
    page.get_by_test_id("sign-in").click()
    expect(page.get_by_test_id("live-status")).to_have_text("live")
    assert page.evaluate("Object.values(sessionStorage)") == [ADMIN_TOKEN]
    assert page.evaluate("localStorage.length") == 0
    page.reload()  # remembered: signed in again without typing
    expect(page.get_by_test_id("whoami")).to_contain_text("admin")
    expect(page.get_by_test_id("remember")).to_be_checked()
    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("token-input")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0
    assert page.evaluate("window.__csp") == []
    assert page.errors == []


# -- 1280 px and 1400 px: nothing clipped, and each request says why (docs/gateway.md#the-dashboard)

# For every table: each cell's right edge against its panel's and the window's.
_MEASURE = """() => {
  const out = [];
  for (const table of document.querySelectorAll("table.grid")) {
    const panel = table.closest("section") || table.parentElement;
    const box = panel.getBoundingClientRect();
    for (const cell of table.querySelectorAll("th, td")) {
      const r = cell.getBoundingClientRect();
      if (r.width === 0) continue;
      out.push({table: table.dataset.testid, text: cell.textContent.slice(0, 40),
                right: r.right, left: r.left, panelRight: box.right, panelLeft: box.left,
                label: cell.dataset.label || null, full: cell.colSpan > 1,
                header: cell.closest("thead") !== null,
                shown: getComputedStyle(cell).display !== "none"});
    }
    out.push({table: table.dataset.testid, overflow: panel.scrollWidth - panel.clientWidth});
  }
  out.push({topbar: document.querySelector(".topbar").getBoundingClientRect().height});
  out.push({page: document.documentElement.scrollWidth});
  return out;
}"""


@pytest.fixture(
    params=[(390, 844), (1280, 800), (1400, 900)], ids=["390x844", "1280x800", "1400x900"]
)
def small_page(browser: Any, request: pytest.FixtureRequest) -> Any:
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    context.width = width  # read by the test
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def test_nothing_is_clipped_and_the_card_says_why(
    gateway: Gateway,
    small_page: Any,
    tmp_path: Path,
) -> None:
    long = "echo " + "a-long-argument-that-does-not-break-" * 4
    for index in range(3):
        wait_status(gateway, submit(gateway, "alpha", f"{long}{index}"), "completed")
    parked = submit(gateway, "alpha", "rm -rf ./scratch")
    wait_status(gateway, parked, "waiting_for_approval")
    page = small_page
    width = page.context.width
    sign_in(page, gateway, ADMIN_TOKEN)
    card = page.get_by_test_id("approval-card").first
    expect(card).to_be_visible()
    why = card.get_by_test_id("approval-why")
    expect(why.get_by_test_id("approval-pattern")).to_contain_text("recursive-delete")
    expect(why.get_by_test_id("approval-backend")).to_contain_text("local backend")
    expect(why.get_by_test_id("approval-cwd")).to_contain_text(str(gateway.homes["alpha"]))
    expect(page.get_by_test_id("decision-row").first).to_be_visible()
    shot = tmp_path / f"dashboard-{width}.png"
    page.screenshot(path=str(shot), full_page=True)
    measured = page.evaluate(_MEASURE)
    assert measured[-1]["page"] <= width, f"the page scrolls sideways at {width} px"
    tables = {m["table"] for m in measured if "table" in m}
    assert {"profiles-table", "decisions-table", "runs-table"} <= tables
    (topbar,) = [m["topbar"] for m in measured if "topbar" in m]
    assert topbar < 60, f"the header wraps ({topbar:.0f} px high at {width} px)"
    if width < 700:
        # A phone: rows are cards; no column header is shown, so every cell names its column.
        cells = [m for m in measured if "right" in m and not m["header"] and not m["full"]]
        assert cells and all(m["label"] for m in cells), [m for m in cells if not m["label"]][:3]
        assert not any(m["header"] and m["shown"] for m in measured if "right" in m)
        labels = {m["label"] for m in cells if m["table"] == "decisions-table"}
        assert {"Outcome", "Cause"} <= labels
    for m in measured:
        if "overflow" in m:
            assert m["overflow"] <= 1, f"{m['table']} overflows its panel by {m['overflow']} px"
        elif "right" in m:
            assert m["right"] <= min(m["panelRight"], width) + 1, f"clipped: {m}"
            assert m["left"] >= m["panelLeft"] - 1, f"clipped: {m}"
    assert shot.stat().st_size > 20_000


def test_a_broken_multiplex_yaml_shows_a_banner_until_it_is_fixed(
    gateway: Gateway, page: Any
) -> None:
    """docs/operations.md#live-reconfiguration: the last good config serves, and the page says
    so at once: from the stream's config.reloaded and profile.reloaded events, well inside
    the page's own poll (which alone could not pass these waits)."""
    from playwright.sync_api import expect as pw_expect

    sign_in(page, gateway, ADMIN_TOKEN)
    banner = page.get_by_test_id("config-error")
    expect(banner).to_be_hidden()
    live = PROFILES_EVERY_S * 1000 / 2
    source = gateway.sup.config.source
    assert source is not None
    good = source.read_text()
    source.write_text(good + "routes:\n  - {platform: slack, profile: ghost}\n")
    with gateway.client() as client:
        reloaded = client.post("/v1/admin/reload").json()
    assert reloaded["ok"] is False
    pw_expect(banner).to_be_visible(timeout=live)
    pw_expect(banner).to_contain_text("multiplex.yaml was not applied")
    pw_expect(banner).to_contain_text("routes.0.profile")
    assert set(gateway.sup.profiles) == set(gateway.homes)  # still serving the last good config
    source.write_text(good)
    with gateway.client() as client:
        assert client.post("/v1/admin/reload").json()["ok"] is True
    pw_expect(banner).to_be_hidden(timeout=live)
    # A home's config.yaml broken, then mended: its row follows.
    alpha = gateway.homes["alpha"] / "config.yaml"
    alpha_good = alpha.read_text()
    row = page.locator('[data-testid="profile-row"][data-profile="alpha"]')
    alpha.write_text(alpha_good + "\naprovals:\n  mode: 'off'\n")
    gateway.sup.reload("alpha")
    pw_expect(row.get_by_test_id("profile-status")).to_contain_text("error", timeout=live)
    alpha.write_text(alpha_good)
    gateway.sup.reload("alpha")
    pw_expect(row.get_by_test_id("profile-status")).not_to_contain_text("error", timeout=live)
    assert not page.errors


def test_the_card_lists_every_danger_with_its_segment_as_text(gateway: Gateway, page: Any) -> None:
    # docs/approvals.md#what-a-prompt-shows; the command text is hostile: never markup.
    line = "cat ~/.aws/credentials && rm -rf './<img src=x onerror=window.pwned=1>'"
    parked = submit(gateway, "alpha", line)
    wait_status(gateway, parked, "waiting_for_approval")
    sign_in(page, gateway, ADMIN_TOKEN)
    card = page.get_by_test_id("approval-card").first
    items = card.get_by_test_id("approval-pattern")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_have_attribute("data-pattern", "secret-read")
    expect(items.nth(0).get_by_test_id("approval-segment")).to_have_text("cat ~/.aws/credentials")
    expect(items.nth(1)).to_have_attribute("data-pattern", "recursive-delete")
    expect(items.nth(1).get_by_test_id("approval-segment")).to_have_text(
        "rm -rf './<img src=x onerror=window.pwned=1>'"
    )
    assert card.locator("img").count() == 0
    assert page.evaluate("window.pwned === undefined") and not page.errors
