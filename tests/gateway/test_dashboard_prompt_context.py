"""The dashboard card says who asked, when, in what context, the sandbox and network the
command would run under, and why in words (docs/approvals.md#what-a-prompt-shows).

Real Chromium, the real app in a real uvicorn; one request comes from a real MCP client
over ``/mcp`` whose name is markup, which the card shows as text.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from multiplex.execution import sandbox_of
from tests.gateway.test_dashboard import (  # noqa: F401  (browser, gateway, page: fixtures)
    ADMIN_TOKEN,
    ALPHA_TOKEN,
    Gateway,
    browser,
    expect,
    gateway,
    page,
    sign_in,
    submit,
    wait_for,
    wait_status,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

HOSTILE = '<img src=x onerror="window.__pwned=1"> agent'


def test_the_card_says_who_when_in_what_and_why(gateway: Gateway, page: Any) -> None:  # noqa: F811
    run_id = submit(gateway, "alpha", "rm -rf ./scratch")
    pending = wait_status(gateway, run_id, "waiting_for_approval")["pending_approval"]
    sign_in(page, gateway, ADMIN_TOKEN)
    card = page.get_by_test_id("approval-card")
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("approval-asked-by")).to_have_text("the admin token")
    expect(card.get_by_test_id("approval-context")).to_have_text("api")
    # The local time and how long ago, kept current while the card is open.
    expect(card.get_by_test_id("approval-asked")).to_have_text(
        re.compile(r"^\d{1,2}:\d\d:\d\d.* \(\d+ s ago\)$")
    )
    sandbox = sandbox_of("local", "auto")[0]
    expect(card.get_by_test_id("approval-sandbox")).to_have_text(str(sandbox))
    expect(card.get_by_test_id("approval-network")).to_have_text(
        "out through the egress proxy, any public host"
    )
    expect(card.get_by_test_id("approval-because")).to_have_text(
        "recursive-delete: " + pending["patterns"][0]["description"]
    )
    # Said once: the danger below names its segment, not the sentence again.
    expect(card.get_by_test_id("approval-pattern")).to_have_text(
        re.compile(r"^recursive-delete\s+rm -rf \./scratch$")
    )
    # The gate's step name is not what the operator is shown.
    expect(card.get_by_test_id("approval-why")).not_to_contain_text("asked by detection")
    expect(card.get_by_test_id("approval-why")).not_to_contain_text("detection")
    assert page.errors == []


def test_an_mcp_clients_name_is_shown_as_text(gateway: Gateway, page: Any) -> None:  # noqa: F811
    done = threading.Event()
    outcome: list[str] = []

    async def call() -> None:
        headers = {"Authorization": f"Bearer {ALPHA_TOKEN}"}
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(f"{gateway.url}/mcp", http_client=client)
            )
            session = await stack.enter_async_context(
                ClientSession(read, write, client_info=Implementation(name=HOSTILE, version="1"))
            )
            await session.initialize()
            result = await session.call_tool("run_command", {"command": "rm -rf ./scratch"})
            outcome.append(str(result.content[0].text))  # type: ignore[union-attr]

    worker = threading.Thread(target=lambda: (anyio.run(call), done.set()), daemon=True)
    worker.start()

    def open_rows() -> list[dict[str, Any]]:
        with gateway.client() as http:
            rows: list[dict[str, Any]] = http.get("/v1/approvals").json()
        return rows

    [row] = wait_for(open_rows, "the MCP client's approval request")
    assert row["asked_by"] == "the MCP client " + HOSTILE
    sign_in(page, gateway, ADMIN_TOKEN)
    card = page.get_by_test_id("approval-card")
    expect(card.get_by_test_id("approval-asked-by")).to_have_text("the MCP client " + HOSTILE)
    assert card.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None
    card.get_by_test_id("deny").click()
    assert done.wait(30), "the MCP call did not end after the deny"
    assert outcome and "denied" in outcome[0]
    assert page.errors == []
