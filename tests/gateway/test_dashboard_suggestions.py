"""The dashboard card says what "Always allow" saves and can save another offered rule
(docs/approvals.md#suggestions), in a real headless Chromium against the real app."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.test_dashboard import (  # noqa: F401  (fixtures used by name)
    ADMIN_TOKEN,
    Gateway,
    browser,
    expect,
    gateway,
    page,
    sign_in,
    submit,
    wait_status,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_always_allow_saves_the_rule_picked_on_the_card(gateway: Gateway, page: Any) -> None:  # noqa: F811
    line = "git push --force origin main:main"
    run_id = submit(gateway, "alpha", line)
    wait_status(gateway, run_id, "waiting_for_approval")
    sign_in(page, gateway, ADMIN_TOKEN)
    card = page.get_by_test_id("approval-card").first
    picker = card.get_by_test_id("always-rule")
    options = picker.locator("option")
    expect(options.first).to_contain_text(line + "  (0 matched)")
    assert picker.input_value() == line  # what "Always allow" saves unless another is picked
    values = [options.nth(i).get_attribute("value") for i in range(options.count())]
    assert values == [
        line,
        "git push --force origin main:*",
        "git push --force origin *",
        "git push *",
    ]
    picker.select_option("git push --force origin *")
    card.get_by_test_id("approve-always").click()
    expect(card).to_have_count(0)
    state = wait_status(gateway, run_id, "completed", "failed", "cancelled")
    assert state["results"][0]["decision"]["decided_by"] == "user", state
    rules = gateway.sup.profiles["alpha"].allowlist.rules()
    assert "git push --force origin *" in rules and line not in rules
    assert not page.errors
