"""docs/agents.md#asking-through-the-client, on the wire: hand-written JSON-RPC to ``multiplex mcp``.

Newline-delimited JSON-RPC on a real subprocess's stdin/stdout, answering the
server's ``elicitation/create`` by hand; every answer's attribution is read
back from the profile's decisions.jsonl.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.mcp.conftest import last_for, records

VERSION = "2025-06-18"


class Wire:
    """One ``multiplex mcp`` process spoken to line by line."""

    def __init__(self, project: Path, profile: str, *, elicitation: bool) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "multiplex", "--config", str(project), "mcp", "-p", profile],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=project.parent,
        )
        self._buffer = b""
        capabilities: dict[str, Any] = {"elicitation": {}} if elicitation else {}
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": VERSION,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "hand-written", "version": "0.1"},
                },
            }
        )
        reply = self.recv()
        assert reply["result"]["protocolVersion"] == VERSION, reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self, bound: float = 120.0) -> dict[str, Any]:
        """The next message (a bound against a hung server, not a timed assertion)."""
        assert self.proc.stdout is not None
        end = time.monotonic() + bound
        while b"\n" not in self._buffer:
            left = end - time.monotonic()
            assert left > 0, "no message from multiplex mcp"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
                assert chunk, "multiplex mcp closed its stdout"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def call(self, request_id: int, command: str) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "run_command", "arguments": {"command": command}},
            }
        )

    def until(self, want: str | int) -> dict[str, Any]:
        """Read until a request with method ``want``, or the response with id ``want``."""
        while True:
            message = self.recv()
            if message.get("method") == want or (
                "method" not in message and message.get("id") == want
            ):
                return message

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture
def wires(project: Path) -> Iterator[list[Wire]]:
    made: list[Wire] = []
    yield made
    for wire in made:
        wire.close()


def _open(
    project: Path, wires: list[Wire], profile: str = "agent", *, elicitation: bool = True
) -> Wire:
    wire = Wire(project, profile, elicitation=elicitation)
    wires.append(wire)
    return wire


def _recorded(project: Path, command: str) -> dict[str, Any]:
    end = time.monotonic() + 60  # a bound against a lost record, not a timed assertion
    while not [r for r in records(project) if r["command"] == command]:
        assert time.monotonic() < end, f"no record of {command!r}"
        time.sleep(0.05)
    return last_for(project, command)


def _answer(wire: Wire, asked: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    wire.send({"jsonrpc": "2.0", "id": asked["id"], "result": result})
    return wire.until(1)["result"]


def test_the_elicitation_on_the_wire_and_accept_once(project: Path, wires: list[Wire]) -> None:
    wire = _open(project, wires)
    wire.call(1, "printf wire-once")
    asked = wire.until("elicitation/create")
    params = asked["params"]
    assert "printf wire-once" in params["message"] and "'agent'" in params["message"]
    schema = params["requestedSchema"]
    assert schema["type"] == "object" and schema["required"] == ["choice"]
    assert schema["properties"]["choice"]["enum"] == ["once", "session", "always", "deny"]
    assert schema["properties"]["reason"]["type"] == "string"
    result = _answer(wire, asked, {"action": "accept", "content": {"choice": "once"}})
    assert result["isError"] is False and "wire-once" in result["content"][0]["text"]
    assert result["structuredContent"]["status"] == "completed"
    record = last_for(project, "printf wire-once")
    assert record["answered_by"] == "mcp-client" and record["by"] == "mcp-client:hand-written"
    assert record["choice"] == "once"


def test_decline_and_cancel_on_the_wire(project: Path, wires: list[Wire]) -> None:
    wire = _open(project, wires)
    wire.call(1, "printf wire-decline")
    result = _answer(wire, wire.until("elicitation/create"), {"action": "decline"})
    assert result["isError"] is True
    declined = last_for(project, "printf wire-decline")
    assert declined["outcome"] == "denied"
    assert declined["cause"] == "denied by the user at the MCP client"
    wire.call(2, "printf wire-cancel")
    asked = wire.until("elicitation/create")
    wire.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "cancel"}})
    result = wire.until(2)["result"]
    assert result["isError"] is True and "denied" not in result["content"][0]["text"]
    cancelled = last_for(project, "printf wire-cancel")
    assert cancelled["outcome"] == "cancelled" and cancelled["answered_by"] == "nobody"
    assert "denied" not in cancelled["cause"]


def test_hardline_and_no_capability_on_the_wire(project: Path, wires: list[Wire]) -> None:
    wire = _open(project, wires)
    wire.call(1, "rm -rf /")
    message = wire.recv()  # the very next message is the result: nothing was put to us
    assert message.get("id") == 1 and "method" not in message, message
    assert message["result"]["isError"] is True
    assert last_for(project, "rm -rf /")["outcome"] == "blocked"
    bare = _open(project, wires, "quick", elicitation=False)
    bare.call(1, "printf wire-bare")
    message = bare.recv()
    assert message.get("method") != "elicitation/create", message
    assert message["result"]["isError"] is True
    record = last_for(project, "printf wire-bare", "quick")
    assert record["outcome"] == "timeout" and record["answered_by"] == "nobody"


def test_a_cancelled_call_withdraws_the_prompt(project: Path, wires: list[Wire]) -> None:
    wire = _open(project, wires)
    wire.call(7, "printf wire-withdrawn")
    asked = wire.until("elicitation/create")
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    note = wire.until("notifications/cancelled")  # the server withdraws its elicitation
    assert note["params"]["requestId"] == asked["id"]
    # No answer comes for a cancelled call; its run resumes in a worker and records the end.
    record = _recorded(project, "printf wire-withdrawn")
    assert record["outcome"] == "cancelled" and record["answered_by"] == "nobody"
    assert record["cause"] == "the MCP tool call was cancelled or its connection closed"


def test_a_closed_connection_is_cancelled(project: Path, wires: list[Wire]) -> None:
    wire = _open(project, wires)
    wire.call(1, "printf wire-closed")
    wire.until("elicitation/create")
    assert wire.close() == 0
    record = last_for(project, "printf wire-closed")
    assert record["outcome"] == "cancelled" and record["answered_by"] == "nobody"
    assert record["cause"] == "the MCP connection closed before the prompt was answered"
