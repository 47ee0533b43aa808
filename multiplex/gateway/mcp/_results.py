"""A run document as an MCP tool result (docs/agents.md#mcp-tools)."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent

__all__ = ["cell_result", "command_result", "refused", "text_result"]


def text_result(text: str, structured: Any = None, *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text=text)], structured_content=structured, is_error=error
    )


def refused(why: str) -> CallToolResult:
    """A call that was not carried out at all (bad arguments, another profile, limits)."""
    return text_result(f"multiplex: {why}", error=True)


def _tail(doc: dict[str, Any], parts: list[str]) -> None:
    if doc.get("error"):
        parts.append(f"error: {doc['error']}")
    if not doc["results"] and doc["status"] == "cancelled":
        parts.append("cancelled before it ran")


def command_result(doc: dict[str, Any]) -> CallToolResult:
    """The redacted exit code, stdout and stderr; ``isError`` unless it ran and exited 0."""
    parts: list[str] = []
    failed = doc["status"] != "completed"
    for row in doc["results"]:
        decision = row["decision"]
        if decision["outcome"] != "approved":
            parts.append(decision["message"] or f"{decision['outcome']}: {decision['cause']}")
            failed = True
            continue
        parts.append(f"exit code: {row['exit_code']}")
        if row["stdout"]:
            parts.append(f"stdout:\n{row['stdout']}")
        if row["stderr"]:
            parts.append(f"stderr:\n{row['stderr']}")
        failed = failed or row["exit_code"] != 0
    _tail(doc, parts)
    return text_result("\n".join(parts), doc, error=failed)


def cell_result(doc: dict[str, Any]) -> CallToolResult:
    """The cell's stdout, stderr, result or error; ``isError`` unless its outcome is ok."""
    parts: list[str] = []
    failed = doc["status"] != "completed"
    for row in doc["results"]:
        if row["stdout"]:
            parts.append(f"stdout:\n{row['stdout']}")
        if row["stderr"]:
            parts.append(f"stderr:\n{row['stderr']}")
        if row["result"] is not None:
            parts.append(f"result: {row['result']}")
        if row["error"] is not None:
            error = row["error"]
            parts.append(f"error: {error.get('ename', '')}: {error.get('evalue', '')}".strip())
        if row["notice"]:
            parts.append(str(row["notice"]))
        if row["outcome"] != "ok":
            parts.append(f"outcome: {row['outcome']}")
            failed = True
    _tail(doc, parts)
    return text_result("\n".join(parts) or "ok (no output)", doc, error=failed)
