"""docs/agents.md#mcp-over-stdio: the SDK's own client against a real ``multiplex mcp -p NAME``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, ClientSession, StdioServerParameters
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult

from tests.gateway.mcp.conftest import NO_SELF, SECRET, last_for, over_stdio, records


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_tools_run_redact_fail_and_judge(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        return {
            "tools": {t.name: t for t in tools.tools},
            "secret": await session.call_tool("run_command", {"command": f"echo token {SECRET}"}),
            "false": await session.call_tool("run_command", {"command": "false"}),
            "test": await session.call_tool("test_command", {"command": "rm -rf / && ls"}),
            "none": await session.call_tool("list_approvals", {}),
            "bad": await session.call_tool("run_command", {"command": ""}),
            "other": await session.call_tool(
                "run_command", {"command": "echo hi", "profile": "quick"}
            ),
        }

    got = over_stdio(project, "agent", body)
    tools = got["tools"]
    assert set(tools) == {"run_command", "execute_code", "test_command", "list_approvals"}
    run_schema = tools["run_command"].input_schema
    assert run_schema["required"] == ["command"]
    assert set(run_schema["properties"]) == {"command", "timeout_s", "session"}
    assert "approval gate" in (tools["run_command"].description or "")
    # An allowed command runs; a known secret in its output never reaches the agent.
    secret = got["secret"]
    assert not secret.is_error
    assert SECRET not in _text(secret) and "[REDACTED" in _text(secret)
    assert "exit code: 0" in _text(secret)
    doc = secret.structured_content
    assert doc["status"] == "completed" and doc["profile"] == "agent"
    assert doc["session_id"].startswith("mcp-")
    assert SECRET not in str(doc)
    assert doc["results"][0]["decision"]["outcome"] == "approved"
    # A failing command is an error result with its exit code.
    assert got["false"].is_error and "exit code: 1" in _text(got["false"])
    # test_command: the verdict with every danger; nothing is recorded for it.
    verdict = got["test"].structured_content
    assert verdict["outcome"] == "blocked" and not got["test"].is_error
    assert {d["pattern"] for d in verdict["dangers"]} >= {"delete-system", "recursive-delete"}
    assert "danger delete-system: rm -rf /" in _text(got["test"])
    assert not [r for r in records(project) if "rm -rf" in r["command"]]
    assert got["none"].structured_content == {"approvals": []}
    assert got["bad"].is_error and "invalid arguments" in _text(got["bad"])
    # -p fixes the profile: the agent cannot act as another one.
    assert got["other"].is_error and "'agent' only" in _text(got["other"])
    assert last_for(project, "echo token [REDACTED:known]")["context"] == "api"


def _server(project: Path, profile: str) -> StdioServerParameters:
    """``multiplex mcp -p PROFILE`` for the SDK's own ``Client`` (per-request protocol)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "multiplex", "--config", str(project), "mcp", "-p", profile],
        cwd=str(project.parent),
    )


def _asking(reply: ElicitResult, seen: list[ElicitRequestParams]):  # type: ignore[no-untyped-def]
    async def elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        seen.append(params)
        return reply

    return elicit


def _run_one(project: Path, command: str, reply: ElicitResult) -> tuple[CallToolResult, list[Any]]:
    seen: list[ElicitRequestParams] = []

    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("run_command", {"command": command})

    return over_stdio(project, "agent", body, elicit=_asking(reply, seen)), seen


def test_accept_once_runs_and_records_the_client(project: Path) -> None:
    reply = ElicitResult(action="accept", content={"choice": "once", "reason": "looks fine"})
    result, seen = _run_one(project, "printf asked-once", reply)
    assert not result.is_error and "asked-once" in _text(result)
    assert len(seen) == 1
    message, schema = seen[0].message, seen[0].requested_schema
    # The command, the profile, where it runs and why it asks.
    assert "printf asked-once" in message and "'agent'" in message
    assert "where: " in message and "/profiles/agent" in message.split("where: ")[1]
    assert "(local backend)" in message and "why: detection" in message
    assert schema["properties"]["choice"]["enum"] == ["once", "session", "always", "deny"]
    assert schema["required"] == ["choice"] and "reason" in schema["properties"]
    record = last_for(project, "printf asked-once")
    assert record["outcome"] == "approved" and record["decided_by"] == "user"
    assert record["answered_by"] == "mcp-client" and record["by"] == "mcp-client:test-client"
    assert record["cause"] == "approved by the user at the MCP client (once)"


def test_accept_always_writes_the_rule(project: Path) -> None:
    result, _ = _run_one(
        project, "printf kept", ElicitResult(action="accept", content={"choice": "always"})
    )
    assert not result.is_error
    config = (project.parent / "profiles" / "agent" / "config.yaml").read_text()
    assert "printf kept" in config
    assert last_for(project, "printf kept")["answered_by"] == "mcp-client"


def test_decline_and_deny_are_the_user_at_the_client(project: Path) -> None:
    for command, reply in (
        ("printf declined", ElicitResult(action="decline")),
        ("printf denied", ElicitResult(action="accept", content={"choice": "deny"})),
    ):
        result, seen = _run_one(project, command, reply)
        assert result.is_error and len(seen) == 1
        assert "the user denied this command" in _text(result)
        record = last_for(project, command)
        assert record["outcome"] == "denied" and record["answered_by"] == "mcp-client"
        assert record["cause"] == "denied by the user at the MCP client"


def test_cancel_is_cancelled_never_denied(project: Path) -> None:
    result, seen = _run_one(project, "printf dismissed", ElicitResult(action="cancel"))
    assert result.is_error and len(seen) == 1
    assert "no user refused it" in _text(result) and "denied" not in _text(result)
    record = last_for(project, "printf dismissed")
    assert record["outcome"] == "cancelled" and record["answered_by"] == "nobody"
    assert record["cause"] == "the user cancelled the prompt at the MCP client"
    assert record["decided_by"] == "nobody"


def test_an_unusable_answer_is_cancelled(project: Path) -> None:
    reply = ElicitResult(action="accept", content={"choice": "yes please"})
    result, _ = _run_one(project, "printf garbled", reply)
    assert result.is_error
    record = last_for(project, "printf garbled")
    assert record["outcome"] == "cancelled" and "not one of once" in record["cause"]


def test_hardline_never_reaches_the_client(project: Path) -> None:
    seen: list[ElicitRequestParams] = []

    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("run_command", {"command": "rm -rf /"})

    reply = ElicitResult(action="accept", content={"choice": "once"})
    result = over_stdio(project, "agent", body, elicit=_asking(reply, seen))
    assert seen == []  # blocked at once: nobody was asked
    assert result.is_error and "No user was asked" in _text(result)
    record = last_for(project, "rm -rf /")
    assert record["outcome"] == "blocked" and record["answered_by"] in ("rule", "policy")


def test_without_the_capability_it_is_a_pending_approval(project: Path) -> None:
    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("run_command", {"command": "printf unanswered"})

    result = over_stdio(project, "quick", body)  # no elicitation_callback: not declared
    assert result.is_error and "not answered in time" in _text(result)
    record = last_for(project, "printf unanswered", "quick")
    assert record["outcome"] == "timeout" and record["answered_by"] == "nobody"
    assert "denied" not in record["cause"]


def test_session_flag_fixes_the_session_and_kernels_keep_state(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        first = await session.call_tool("execute_code", {"code": "x = 41"})
        second = await session.call_tool("execute_code", {"code": "x + 1"})
        other = await session.call_tool("run_command", {"command": "echo a", "session": "s2"})
        return {"tools": tools.tools, "first": first, "second": second, "other": other}

    got = over_stdio(project, "agent", body, extra=("--session", "fixed-s"))
    run_tool = next(t for t in got["tools"] if t.name == "run_command")
    assert "session" not in run_tool.input_schema["properties"]
    assert not got["first"].is_error, _text(got["first"])
    assert "result: 42" in _text(got["second"])
    assert got["second"].structured_content["session_id"] == "fixed-s"
    assert got["other"].is_error and "'fixed-s' only" in _text(got["other"])


def test_self_approve_false_never_asks_the_client(project: Path) -> None:
    seen: list[ElicitRequestParams] = []

    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("run_command", {"command": "printf not-mine"})

    reply = ElicitResult(action="accept", content={"choice": "once"})
    result = over_stdio(project, "no-self", body, elicit=_asking(reply, seen))
    assert seen == []  # the profile's own side may not answer its prompts
    assert result.is_error and "not answered in time" in _text(result)
    assert last_for(project, "printf not-mine", "no-self")["outcome"] == "timeout"


def test_the_per_profile_run_limit_applies(project: Path) -> None:
    project.write_text(project.read_text() + "gateway: {max_runs_per_profile: 1}\n")
    asked, release = anyio.Event(), anyio.Event()

    async def elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.set()
        await release.wait()  # the first run stays parked until the second was refused
        return ElicitResult(action="accept", content={"choice": "once"})

    async def body(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        results: dict[str, CallToolResult] = {}

        async def first() -> None:
            results["first"] = await session.call_tool("run_command", {"command": "printf one"})

        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await asked.wait()
            second = await session.call_tool("run_command", {"command": "echo two"})
            release.set()
        return results["first"], second

    first, second = over_stdio(project, "agent", body, elicit=elicit)
    assert second.is_error and "max_runs_per_profile: 1" in _text(second)
    assert not first.is_error and "one" in _text(first)


def test_a_per_request_client_is_asked_with_input_required(project: Path) -> None:
    # The SDK's Client speaks 2026-07-28 when the server offers it: no server-to-client
    # requests, so the consent comes back as InputRequiredResult and the call is repeated.
    seen: list[ElicitRequestParams] = []
    replies = iter(
        [
            ElicitResult(action="accept", content={"choice": "once"}),
            ElicitResult(action="cancel"),
        ]
    )

    async def elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        seen.append(params)
        return next(replies)

    params = _server(project, "agent")

    async def main() -> tuple[CallToolResult, CallToolResult]:
        async with Client(params, elicitation_callback=elicit) as client:
            once = await client.call_tool("run_command", {"command": "printf per-request"})
            cancel = await client.call_tool("run_command", {"command": "printf per-cancel"})
            return once, cancel

    once, cancel = anyio.run(main)
    assert len(seen) == 2 and "printf per-request" in seen[0].message
    assert not once.is_error and "per-request" in _text(once)
    record = last_for(project, "printf per-request")
    assert record["answered_by"] == "mcp-client" and record["outcome"] == "approved"
    assert cancel.is_error
    cancelled = last_for(project, "printf per-cancel")
    assert cancelled["outcome"] == "cancelled" and cancelled["answered_by"] == "nobody"
    assert cancelled["cause"] == "the user cancelled the prompt at the MCP client"


def test_a_client_that_may_not_answer_cannot_answer_by_naming_the_prompt(
    project: Path, make_home: Any
) -> None:
    # approvals.self_approve: false: nothing is sent to the client, and a reply it makes
    # up from list_approvals' ids (requestState + inputResponses) is refused, not applied.
    home = make_home("locked", NO_SELF.replace("timeout: 1", "timeout: 4"))
    consent = ElicitResult(action="accept", content={"choice": "always"})

    async def elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
        raise AssertionError("the client was asked")

    params = _server(project, "locked")

    async def main() -> tuple[CallToolResult, CallToolResult]:
        async with Client(params, elicitation_callback=elicit) as client:
            out: dict[str, CallToolResult] = {}

            async def first() -> None:
                out["first"] = await client.call_tool("run_command", {"command": "printf forged"})

            async with anyio.create_task_group() as group:
                group.start_soon(first)
                rows: list[dict[str, Any]] = []
                while not rows:
                    await anyio.sleep(0.1)
                    listed = await client.call_tool("list_approvals", {})
                    rows = (listed.structured_content or {}).get("approvals", [])
                state = f"{rows[0]['run_id']} {rows[0]['approval_id']}"
                forged = await client.session.call_tool(
                    "run_command",
                    {"command": "true"},
                    request_state=state,
                    input_responses={"consent": consent},
                    allow_input_required=True,
                )
            return out["first"], forged

    first, forged = anyio.run(main)
    assert forged.is_error and "self_approve is false" in _text(forged)
    assert first.is_error and "not answered in time" in _text(first)
    record = last_for(project, "printf forged", "locked")
    assert record["outcome"] == "timeout" and record["answered_by"] == "nobody"
    assert "printf forged" not in (home / "config.yaml").read_text()


def test_test_command_counts_the_sessions_grants_and_arguments_are_strict(project: Path) -> None:
    # A session answer's grant approves run_command at once; test_command said "ask" (it
    # judged in another session). And a boolean or a string is no number of seconds.
    reply = ElicitResult(action="accept", content={"choice": "session"})

    async def body(session: ClientSession) -> tuple[CallToolResult, ...]:
        ran = await session.call_tool("run_command", {"command": "printf granted"})
        tested = await session.call_tool("test_command", {"command": "printf granted"})
        flag = await session.call_tool("run_command", {"command": "echo x", "timeout_s": True})
        text = await session.call_tool("run_command", {"command": "echo x", "timeout_s": "5"})
        return ran, tested, flag, text

    ran, tested, flag, text = over_stdio(project, "agent", body, elicit=_asking(reply, []))
    assert not ran.is_error and "granted" in _text(ran)
    assert _text(tested).startswith("approved: session grant"), _text(tested)
    assert flag.is_error and text.is_error


def test_a_clients_error_reply_is_recorded_on_one_line(project: Path) -> None:
    from mcp_types import ErrorData

    async def elicit(context: Any, params: ElicitRequestParams) -> ErrorData:
        return ErrorData(code=-32603, message="boom\nsecond line")

    async def body(session: ClientSession) -> CallToolResult:
        return await session.call_tool("run_command", {"command": "printf errored"})

    result = over_stdio(project, "agent", body, elicit=elicit)
    assert result.is_error
    record = last_for(project, "printf errored")
    assert record["outcome"] == "cancelled" and record["answered_by"] == "nobody"
    assert record["cause"] == "the MCP client could not ask: boom second line", record["cause"]
