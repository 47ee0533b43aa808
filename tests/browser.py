"""Debian's Chromium for the browser tests, driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps dialling out, which the
# closed network here refuses many times a second.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> Path:
    """The browser's path, or skip the test saying how to install it."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium not installed: apt-get install chromium (make test does it)")
    return CHROMIUM
