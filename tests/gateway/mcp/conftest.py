"""An MCP project: homes for ``multiplex mcp`` and the SDK's client over stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation

SECRET = "sk-mcptestsecret0123456789abcdefXYZ"
# strict: everything not allowlisted asks (docs/configuration.md#configyaml-keys).
AGENT = """\
terminal:
  cwd: .
command_allowlist: ["echo *", "false", "cat *"]
approvals:
  mode: strict
  timeout: 600
"""
# Nobody answers a prompt of this one in time (no client can be asked).
QUICK = """\
terminal:
  cwd: .
approvals:
  mode: strict
  timeout: 1
"""

# approvals.self_approve: false: the profile's own side (its MCP client too) may not answer.
NO_SELF = """\
terminal:
  cwd: .
approvals:
  mode: strict
  timeout: 1
  self_approve: false
"""


@pytest.fixture
def project(make_home, write_config) -> Path:  # type: ignore[no-untyped-def]
    make_home("agent", AGENT, env=f"OPENAI_API_KEY={SECRET}\n")
    make_home("quick", QUICK)
    make_home("no-self", NO_SELF)
    return write_config("profiles_dir: profiles\nwatch: {mode: 'off'}\n")


def records(project: Path, profile: str = "agent") -> list[dict[str, Any]]:
    path = project.parent / "profiles" / profile / "logs" / "decisions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def last_for(project: Path, command: str, profile: str = "agent") -> dict[str, Any]:
    found = [r for r in records(project, profile) if r["command"] == command]
    assert found, f"no record of {command!r}"
    return found[-1]


def over_stdio(
    project: Path,
    profile: str,
    body: Callable[[ClientSession], Awaitable[Any]],
    *,
    elicit: Callable[..., Awaitable[Any]] | None = None,
    extra: tuple[str, ...] = (),
) -> Any:
    """Run ``body(session)`` against a real ``multiplex mcp -p profile`` subprocess."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "multiplex", "--config", str(project), "mcp", "-p", profile, *extra],
        cwd=str(project.parent),
    )

    async def main() -> Any:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(
                read,
                write,
                elicitation_callback=elicit,
                client_info=Implementation(name="test-client", version="1.0"),
            ) as session,
        ):
            await session.initialize()
            return await body(session)

    return anyio.run(main)
