"""``multiplex audit --html FILE``: one self-contained page, escaped, rendered by real Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from multiplex.audit import PLUGINS_ENV, AuditReport, render_html, run_audit
from multiplex.scopes import register_surface
from tests.audit import REPO
from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.conftest import write_home

HOSTILE = "<script>alert('x')</script><img src=https://example.invalid/x.png>"


def hostile_surface() -> None:
    """A surface whose value is markup (the page must show it as text)."""
    register_surface("hostile_markup", lambda scope: f"{HOSTILE}{scope.name}")


def leaky_surface() -> None:
    """A fault: every profile sees whichever profile resolved first (a divergence)."""
    first: dict[str, str] = {}
    register_surface("leaky_first", lambda scope: first.setdefault("name", scope.name))


def audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins: str) -> AuditReport:
    root = tmp_path / "profiles"
    write_home(root, "one", "terminal: {cwd: .}\n", "ONE_TOKEN=one-secret-value-abcdef\n")
    write_home(root, "two<b>", "security: {redact_secrets: false}\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: one\n")
    monkeypatch.setenv(PLUGINS_ENV, plugins)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    return run_audit(config)


def open_in_chromium(page_path: Path) -> tuple[str, list[str], int]:
    """(verdict text, URLs requested, number of script elements) as real Chromium renders the page."""
    require_chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    requests: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_path.as_uri())
            verdict = page.inner_text("#verdict")
            scripts = page.locator("script").count()
        finally:
            browser.close()
    return verdict, requests, scripts


@pytest.mark.slow
def test_passing_report_renders_in_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: None
) -> None:
    report = audit(tmp_path, monkeypatch, "tests.audit.test_html:hostile_surface")
    assert report.ok, report.verdict
    html = render_html(report)
    assert "<script>" not in html and "&lt;script&gt;" in html  # escaped, shown as text
    assert "one-secret-value-abcdef" not in html  # masked
    page = tmp_path / "report.html"
    page.write_text(html)
    verdict, requests, scripts = open_in_chromium(page)
    assert "AUDIT PASSED" in verdict
    assert scripts == 0
    assert all(u.startswith("file://") for u in requests), requests  # self-contained


@pytest.mark.slow
def test_failing_report_highlights_the_divergence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: None
) -> None:
    report = audit(tmp_path, monkeypatch, "tests.audit.test_html:leaky_surface")
    assert not report.ok
    html = render_html(report)
    assert "class='cell bad'" in html and "leaky_first" in html
    page = tmp_path / "report.html"
    page.write_text(html)
    verdict, _, _ = open_in_chromium(page)
    assert "AUDIT FAILED" in verdict and "divergence" in verdict
