"""docs/agents.md#mcp-over-http: ``/mcp`` of a real ``multiplex up``, with the SDK's client and by hand."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, Implementation

from tests.cli.conftest import start_up, stop_up
from tests.gateway.conftest import TOKENS, Api, make_homes

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "by-hand", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Up:
    root: Path
    homes: dict[str, Path]
    url: str
    admin_token: str

    @property
    def admin(self) -> Api:
        return Api(self.url, self.admin_token)


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    root = tmp_path_factory.mktemp("mcp-up")
    homes = make_homes(root)
    config = homes["alpha"] / "config.yaml"  # prompts stay open until a test answers them
    config.write_text(config.read_text().replace("timeout: 30", "timeout: 900"))
    proc, url, token = start_up(root)
    try:
        yield Up(root, homes, url, token)
    finally:
        stop_up(proc)


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _records(home: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (home / "logs/decisions.jsonl").read_text().splitlines()]


def _last_for(home: Path, command: str) -> dict[str, Any]:
    return [r for r in _records(home) if r["command"] == command][-1]


def over_http(
    up: Up,
    token: str,
    body: Callable[[ClientSession], Awaitable[Any]],
    *,
    elicit: Callable[..., Awaitable[Any]] | None = None,
) -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(f"{up.url}/mcp", http_client=client)
            )
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    elicitation_callback=elicit,
                    client_info=Implementation(name="remote-agent", version="2"),
                )
            )
            await session.initialize()
            return await body(session)

    return anyio.run(main)


def test_no_token_or_a_wrong_one_is_401(up: Up) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-token-of-anyone-000000"}):
        r = httpx.post(f"{up.url}/mcp", json=INIT, headers={**ACCEPT, **headers}, timeout=30)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"] == "Bearer"
        assert "mcp-session-id" not in r.headers


def test_a_profile_token_acts_as_its_own_profile_only(up: Up) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        return {
            "tools": {t.name: t for t in tools.tools},
            "mine": await session.call_tool("run_command", {"command": "printf from-http"}),
            "beta": await session.call_tool("run_command", {"command": "true", "profile": "beta"}),
            "test": await session.call_tool("test_command", {"command": "true", "profile": "beta"}),
        }

    got = over_http(up, TOKENS["alpha"], body)
    assert "profile" in got["tools"]["run_command"].input_schema["properties"]
    mine = got["mine"]
    assert not mine.is_error and "from-http" in _text(mine)
    assert mine.structured_content["profile"] == "alpha"
    assert got["beta"].is_error and "no profile named 'beta'" in _text(got["beta"])
    assert got["test"].is_error
    assert not (up.homes["beta"] / "logs/decisions.jsonl").exists() or not [
        r for r in _records(up.homes["beta"]) if r["session"].startswith("mcp-")
    ]


def test_the_admin_token_names_a_profile(up: Up) -> None:
    async def body(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        named = await session.call_tool("run_command", {"command": "true", "profile": "beta"})
        default = await session.call_tool("run_command", {"command": "true"})
        return named, default

    named, default = over_http(up, up.admin_token, body)
    assert not named.is_error and named.structured_content["profile"] == "beta"
    assert default.structured_content["profile"] == "alpha"  # default_profile


def test_a_session_is_bound_to_the_token_that_opened_it(up: Up) -> None:
    with httpx.Client(base_url=up.url, timeout=30) as client:
        alpha = {**ACCEPT, "Authorization": f"Bearer {TOKENS['alpha']}"}
        opened = client.post("/mcp", json=INIT, headers=alpha)
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        ready = {**alpha, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-06-18"}
        assert client.post("/mcp", json=note, headers=ready).status_code == 202
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "true"}},
        }
        # Another profile's token, and the admin token, cannot use alpha's session.
        for token in (TOKENS["beta"], up.admin_token):
            other = {**ready, "Authorization": f"Bearer {token}"}
            r = client.post("/mcp", json=call, headers=other)
            assert r.status_code == 404, r.text
        r = client.post("/mcp", json=call, headers=ready)
        assert r.status_code == 200 and '"isError":false' in r.text.replace(" ", "")


def test_the_body_limit_applies(up: Up) -> None:
    big = {**INIT, "params": {**INIT["params"], "pad": "x" * (2 * 1024 * 1024)}}  # type: ignore[dict-item]
    headers = {**ACCEPT, "Authorization": f"Bearer {TOKENS['alpha']}"}
    r = httpx.post(f"{up.url}/mcp", json=big, headers=headers, timeout=30)
    assert r.status_code == 413


def test_the_dashboard_answers_first_and_the_elicitation_is_withdrawn(up: Up) -> None:
    withdrawn = anyio.Event()
    asked: list[ElicitRequestParams] = []

    async def elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params)
        try:
            await anyio.sleep_forever()  # the user never answers at the client
        except anyio.get_cancelled_exc_class():
            withdrawn.set()
            raise
        raise AssertionError("unreachable")

    def answer_on_dashboard() -> None:
        admin = up.admin
        while True:  # the prompt is open as an ordinary pending approval
            rows = [r for r in admin.get("/v1/approvals").json() if r["command"] == "ls -d /tmp"]
            if rows and asked:
                break
            anyio.from_thread.run(anyio.sleep, 0.05)
        row = rows[0]
        assert admin.answer(row["run_id"], row["approval_id"], "once").status_code == 200

    async def body(session: ClientSession) -> CallToolResult:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, answer_on_dashboard)
            result = await session.call_tool("run_command", {"command": "ls -d /tmp"})
        with anyio.fail_after(30):
            await withdrawn.wait()
        return result

    result = over_http(up, TOKENS["alpha"], body, elicit=elicit)
    assert not result.is_error and "/tmp" in _text(result)
    assert len(asked) == 1 and "ls -d /tmp" in asked[0].message
    record = _last_for(up.homes["alpha"], "ls -d /tmp")
    assert record["outcome"] == "approved" and record["answered_by"] == "admin"


def test_without_the_capability_the_dashboard_answers(up: Up) -> None:
    def deny_on_dashboard() -> None:
        admin = up.admin
        while True:
            rows = [r for r in admin.get("/v1/approvals").json() if r["command"] == "ls -d /var"]
            if rows:
                break
            anyio.from_thread.run(anyio.sleep, 0.05)
        row = rows[0]
        assert row["profile"] == "alpha" and row["session_id"].startswith("mcp-")
        r = admin.answer(row["run_id"], row["approval_id"], "deny", reason="not now")
        assert r.status_code == 200

    async def body(session: ClientSession) -> CallToolResult:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, deny_on_dashboard)
            return await session.call_tool("run_command", {"command": "ls -d /var"})

    result = over_http(up, TOKENS["alpha"], body)  # no elicitation capability declared
    assert result.is_error and "the user denied this command" in _text(result)
    record = _last_for(up.homes["alpha"], "ls -d /var")
    assert record["outcome"] == "denied" and record["answered_by"] == "admin"
    assert record["cause"] == "denied by user: not now"


def test_a_stop_withdraws_the_prompt_as_cancelled(tmp_path: Path) -> None:
    homes = make_homes(tmp_path)
    proc, url, _ = start_up(tmp_path)
    stopped = Up(tmp_path, homes, url, "")
    try:

        async def body(session: ClientSession) -> CallToolResult | None:
            async with anyio.create_task_group() as group:

                def stop_when_parked() -> None:
                    while not Api(url, TOKENS["alpha"]).get("/v1/approvals").json():
                        anyio.from_thread.run(anyio.sleep, 0.05)
                    stop_up(proc)  # SIGTERM while the tool call waits for a human

                group.start_soon(anyio.to_thread.run_sync, stop_when_parked)
                try:
                    return await session.call_tool("run_command", {"command": "ls -d /etc"})
                except Exception:  # the stop's --grace 2 cut the stream before the answer
                    return None

        result = over_http(stopped, TOKENS["alpha"], body)
    finally:
        stop_up(proc)
    if result is not None:  # told, when it got through: cancelled, never denied
        assert result.is_error and "no user refused it" in _text(result)
    record = _last_for(homes["alpha"], "ls -d /etc")
    assert record["outcome"] == "cancelled" and record["cause"] == "supervisor shutting down"


def _modern_call(up: Up, token: str, arguments: dict[str, Any], **more: Any) -> dict[str, Any]:
    """One 2026-07-28 tools/call by hand: the per-request envelope, no session."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "by-hand", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "run_command", "arguments": arguments, "_meta": meta, **more},
    }
    headers = {
        **ACCEPT,
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "run_command",
    }
    r = httpx.post(f"{up.url}/mcp", json=body, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        frames = [line[5:] for line in r.text.splitlines() if line.startswith("data:")]
        return next(m for m in map(json.loads, frames) if m.get("id") == 1)
    message: dict[str, Any] = r.json()
    return message


def test_a_request_state_answers_only_its_own_profiles_run(up: Up) -> None:
    first = _modern_call(up, TOKENS["alpha"], {"command": "ls -d /usr"})["result"]
    assert first["resultType"] == "input_required", first
    state = first["requestState"]
    assert "ls -d /usr" in first["inputRequests"]["consent"]["params"]["message"]
    reply = {"consent": {"action": "accept", "content": {"choice": "once"}}}
    # Another profile's token replaying alpha's state (and a "yes") answers nothing.
    stolen = _modern_call(
        up, TOKENS["beta"], {"command": "ls -d /usr"}, requestState=state, inputResponses=reply
    )["result"]
    assert stolen["isError"] is True and "names no run of this profile" in str(stolen)
    rows = [r for r in up.admin.get("/v1/approvals").json() if r["command"] == "ls -d /usr"]
    assert len(rows) == 1  # still open
    done = _modern_call(
        up, TOKENS["alpha"], {"command": "ls -d /usr"}, requestState=state, inputResponses=reply
    )["result"]
    assert done["isError"] is False and "/usr" in done["content"][0]["text"], done
    record = _last_for(up.homes["alpha"], "ls -d /usr")
    assert record["answered_by"] == "mcp-client" and record["by"] == "mcp-client:by-hand"


def test_a_dropped_stream_resumes_with_last_event_id(up: Up) -> None:
    alpha = {**ACCEPT, "Authorization": f"Bearer {TOKENS['alpha']}"}
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"elicitation": {}}}}  # type: ignore[dict-item]
    with httpx.Client(base_url=up.url, timeout=60) as client:
        opened = client.post("/mcp", json=init, headers=alpha)
        session = {**alpha, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        session["MCP-Protocol-Version"] = "2025-06-18"
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        client.post("/mcp", json=note, headers=session)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "ls -d /sbin"}},
        }
        last = asked = None
        with client.stream("POST", "/mcp", json=call, headers=session) as stream:
            for line in stream.iter_lines():
                if line.startswith("id:"):
                    last = line[3:].strip()
                if line.startswith("data:") and "elicitation/create" in line:
                    asked = json.loads(line[5:])
                    break  # the client drops the stream here
        assert last is not None and asked is not None
        # The elicitation is still open: answer it, then resume the stream where it broke.
        reply = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"action": "accept", "content": {"choice": "once"}},
        }
        assert client.post("/mcp", json=reply, headers=session).status_code == 202
        resumed = {**session, "Accept": "text/event-stream", "Last-Event-ID": last}
        result = None
        with client.stream("GET", "/mcp", headers=resumed) as stream:
            assert stream.status_code == 200
            for line in stream.iter_lines():
                if line.startswith("data:") and '"id":2' in line.replace(" ", ""):
                    result = json.loads(line[5:])["result"]
                    break
        assert result is not None and result["isError"] is False
        assert "/sbin" in result["content"][0]["text"]
        # Another session of the same token cannot replay this one's stream.
        other = client.post("/mcp", json=init, headers=alpha)
        stranger = {**resumed, "Mcp-Session-Id": other.headers["mcp-session-id"]}
        with client.stream("GET", "/mcp", headers=stranger) as stream:
            for line in stream.iter_lines():
                assert "ls -d /sbin" not in line and '"id":2' not in line.replace(" ", "")
                if line.startswith(":"):
                    break  # its first keep-alive: nothing was replayed before it
    assert _last_for(up.homes["alpha"], "ls -d /sbin")["answered_by"] == "mcp-client"


# docs/agents.md#mcp-over-http: the SDK is loaded on the first /mcp request only.
_LAZY = """
import sys
from fastapi.testclient import TestClient
from multiplex import Supervisor
from multiplex.gateway.http._app import create_app

def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types"))

sup = Supervisor.from_config(sys.argv[1]).start()
app = create_app(sup, admin_token="lazy-admin-token-0123456789")
with TestClient(app) as client:
    assert client.get("/healthz").status_code == 200
    assert client.get("/v1/profiles", headers={"Authorization": "Bearer " + sys.argv[2]}).status_code == 200
    assert loaded() == [], loaded()
    headers = {"Authorization": "Bearer " + sys.argv[2], **ACCEPT}
    first = client.post("/mcp", json=INIT, headers=headers)
    assert first.status_code == 200, first.text
    assert "mcp.server.streamable_http_manager" in sys.modules
sup.close()
print("ok")
"""


def test_the_sdk_is_loaded_by_the_first_mcp_request_only(tmp_path: Path) -> None:
    import subprocess
    import sys

    make_homes(tmp_path)
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: alpha\n")
    script = f"INIT = {INIT!r}\nACCEPT = {ACCEPT!r}\n{_LAZY}"
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "multiplex.yaml"), TOKENS["alpha"]],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_first_mcp_requests_at_once_share_one_session_manager(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    make_homes(tmp_path)
    proc, url, _ = start_up(tmp_path)
    try:
        headers = {**ACCEPT, "Authorization": f"Bearer {TOKENS['alpha']}"}

        def initialize(_: int) -> httpx.Response:
            return httpx.post(f"{url}/mcp", json=INIT, headers=headers, timeout=60)

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(initialize, range(8)))
        assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers]
        sessions = {a.headers["mcp-session-id"] for a in answers}
        assert len(sessions) == 8  # each its own session, all in the one manager
        listed = httpx.post(
            f"{url}/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={
                **headers,
                "Mcp-Session-Id": sessions.pop(),
                "MCP-Protocol-Version": "2025-06-18",
            },
            timeout=60,
        )
        assert listed.status_code == 200 and "run_command" in listed.text, listed.text
    finally:
        logged = stop_up(proc)
    assert "Traceback" not in logged, logged


def test_a_first_request_cancelled_while_it_waits_leaves_one_manager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client that drops its first /mcp request mid-start cannot make the gateway start
    (and leak) a session manager per try; one starting as the gateway stops is ended."""
    import asyncio

    import multiplex.gateway.mcp as mcp_package
    from multiplex.gateway.http._mcp_mount import McpMount

    started: list[int] = []
    stopped: list[int] = []

    class Endpoint:  # stands in for the SDK's manager: only its life is watched here
        def __init__(self, gateway: object) -> None:
            self.number = len(started)

        @contextlib.asynccontextmanager
        async def running(self):  # type: ignore[no-untyped-def]
            await asyncio.sleep(0.2)
            started.append(self.number)
            try:
                yield
            finally:
                stopped.append(self.number)

        async def __call__(self, scope: object, receive: object, send: object) -> None:
            return None

    monkeypatch.setattr(mcp_package, "McpEndpoint", Endpoint)

    async def main() -> None:
        mount = McpMount(None)  # type: ignore[arg-type]
        app = mount.route(None)  # type: ignore[arg-type]
        async with mount.running():
            first = asyncio.create_task(app({"type": "http", "path": "/mcp"}, None, None))  # type: ignore[arg-type]
            await asyncio.sleep(0.1)
            first.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await first
            for _ in range(3):
                await app({"type": "http", "path": "/mcp"}, None, None)  # type: ignore[arg-type]
            assert started == [0]
        assert stopped == [0]  # ended with the gateway, not left running

    asyncio.run(main())
