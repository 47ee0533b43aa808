"""The MCP tools: names, JSON Schemas and the descriptions an agent acts on (docs/agents.md#mcp-tools)."""

from __future__ import annotations

from typing import Any

from mcp_types import Tool, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CodeArgs",
    "CommandArgs",
    "ListArgs",
    "TestArgs",
    "tool_list",
]

_SESSION = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": (
        "The multiplex session (grants, kernels). Default: one session per MCP connection."
    ),
}
_PROFILE = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": (
        "Admin token only: the profile to act as (default: the default profile). "
        "A profile token acts as its own profile and may only name that one."
    ),
}


class _Args(BaseModel):
    # Strict: the schema's types as declared (``timeout_s: true`` is no 1 s, ``"5"`` no 5).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    profile: str | None = Field(default=None, min_length=1, max_length=200)


class CommandArgs(_Args):
    """``run_command``'s arguments."""

    command: str = Field(min_length=1, max_length=65_536)
    session: str | None = Field(default=None, min_length=1, max_length=200)
    timeout_s: float | None = Field(default=None, gt=0, le=86_400)


class CodeArgs(_Args):
    """``execute_code``'s arguments."""

    code: str = Field(min_length=1, max_length=1_048_576)
    session: str | None = Field(default=None, min_length=1, max_length=200)
    reset: bool = False


class TestArgs(_Args):
    """``test_command``'s arguments."""

    command: str = Field(min_length=1, max_length=65_536)
    session: str | None = Field(default=None, min_length=1, max_length=200)


class ListArgs(_Args):
    """``list_approvals``'s arguments."""


def _schema(
    properties: dict[str, Any], required: list[str], *, session: bool, profile: bool
) -> dict[str, Any]:
    props = dict(properties)
    if session:
        props["session"] = _SESSION
    if profile:
        props["profile"] = _PROFILE
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


_RUN = (
    "Run one shell command through this multiplex profile's approval gate and sandbox. "
    "It runs only if the gate approves it (allowlist, session grants, policy) or a human "
    "approves it when asked (through this MCP client when it supports elicitation, else on "
    "the multiplex dashboard). The text is the exit code, stdout and stderr, with secrets "
    "redacted; a command that was refused, was not answered, or exited non-zero is an error "
    "result whose text says why. Do not retry a command the user denied. structuredContent "
    "is the multiplex run document (status, results[].decision, exit_code, stdout, stderr)."
)
_CODE = (
    "Run Python code as one cell of this session's persistent kernel (variables survive "
    "between calls; reset=true starts a fresh kernel). Shell commands the code starts through "
    "multiplex.kernel.run go through the same approval gate as run_command. The text is the "
    "cell's stdout, stderr and result; an error, timeout or refusal is an error result."
)
_TEST = (
    "Ask the approval gate what it would do with a command, without running it or recording "
    "anything: approved, blocked, or ask (a human must approve), with the cause and every "
    "danger found in the line. Use it before run_command to avoid asking for something that "
    "will be refused."
)
_LIST = (
    "List this profile's open approval requests (commands waiting for a human), with the "
    "command, where it would run, why it asks and when the request expires."
)


def tool_list(*, session: bool, profile: bool, kernels: bool) -> list[Tool]:
    """The tools this connection offers; ``session``/``profile``: whether those arguments exist."""
    tools = [
        Tool(
            name="run_command",
            title="Run a shell command (gated)",
            description=_RUN,
            input_schema=_schema(
                {
                    "command": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 65_536,
                        "description": "The shell command line, as for bash -c.",
                    },
                    "timeout_s": {
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "maximum": 86_400,
                        "description": "Seconds before the command is stopped (at most the profile's terminal.timeout).",
                    },
                },
                ["command"],
                session=session,
                profile=profile,
            ),
            annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
        ),
        Tool(
            name="test_command",
            title="What would the gate do?",
            description=_TEST,
            input_schema=_schema(
                {
                    "command": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 65_536,
                        "description": "The shell command line to judge.",
                    }
                },
                ["command"],
                session=session,  # its grants count, as they would for run_command
                profile=profile,
            ),
            annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
        ),
        Tool(
            name="list_approvals",
            title="Open approval requests",
            description=_LIST,
            input_schema=_schema({}, [], session=False, profile=profile),
            annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
        ),
    ]
    if kernels:
        tools.insert(
            1,
            Tool(
                name="execute_code",
                title="Run Python in the session's kernel",
                description=_CODE,
                input_schema=_schema(
                    {
                        "code": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 1_048_576,
                            "description": "Python source for one cell.",
                        },
                        "reset": {
                            "type": "boolean",
                            "default": False,
                            "description": "Discard the kernel's state first.",
                        },
                    },
                    ["code"],
                    session=session,
                    profile=profile,
                ),
                annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
            ),
        )
    return tools
