"""Asking through the MCP client: ``elicitation/create`` for an open approval (docs/agents.md#asking-through-the-client).

The request stays an ordinary pending approval while the client asks its
user: the dashboard, the CLI or another node may answer it too, and the first
answer wins. The client's answer goes through the gate's answer path, like the
dashboard's (``always`` saves its rule first), named ``mcp-client:<name>``.
Only a human's choice is an answer: ``accept`` with ``deny`` and ``decline``
are "denied by the user at the MCP client"; ``cancel``, an unusable reply, an
error, a closed connection are ``cancelled`` with that cause; the deadline is
``timeout``. When the request settles elsewhere first, the elicitation is
withdrawn (the SDK sends ``notifications/cancelled``), which denies nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import anyio
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, ElicitResult, RequestId

from multiplex.approval import AnswerNotSaved, Gate
from multiplex.approval.waiting._pending import Answer, Choice, PendingApproval, command_block
from multiplex.approval.waiting._why import visible

__all__ = ["CONSENT_SCHEMA", "answer_of", "apply_reply", "ask_client", "consent_message"]

log = logging.getLogger("multiplex.mcp")

CONSENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "choice": {
            "type": "string",
            "title": "Answer",
            "description": (
                "once: run it this time; session: and allow it again in this session; "
                "always: save it to the profile's allowlist; deny: do not run it"
            ),
            "enum": [c.value for c in Choice],
        },
        "reason": {
            "type": "string",
            "title": "Reason (optional)",
            "description": "Kept in the profile's decision record.",
            "maxLength": 500,
        },
    },
    "required": ["choice"],
}

CANCELLED_AT_CLIENT = "the user cancelled the prompt at the MCP client"
CLOSED = "the MCP connection closed before the prompt was answered"


def consent_message(request: PendingApproval) -> str:
    """What the client shows: the command, the profile, where it runs, why it asks, every danger."""
    why = request.why
    lines = [
        f"multiplex profile {request.profile!r} asks before running:",
        command_block(request.display),
        f"where: {why.cwd} ({why.backend} backend), session {request.session!r}",
        f"why: {why.step}: {visible(why.reason)}" if why.reason else f"why: {why.step}",
    ]
    if why.dangers:
        lines.append("dangers:")
        lines.extend(f"  - {d.pattern}: {visible(d.segment)}" for d in why.dangers)
    elif why.patterns:
        lines.extend(f"  - {name}: {sentence}" for name, sentence in why.patterns)
    saved = [s for s in why.suggestions if s.saves]  # docs/approvals.md#suggestions
    if saved:
        bound = sorted({name for s in saved for name in s.bind})
        what = "; ".join(s.rule for s in saved) + (
            f", bound to {', '.join(bound)}" if bound else ""
        )
        lines.append(f"Answer once, session, always (saves the allowlist rule: {what}) or deny.")
    else:
        lines.append("Answer once, session, always (saves an allowlist rule) or deny.")
    return "\n".join(lines)


def answer_of(result: ElicitResult, by: str) -> Answer | str:
    """The answer a client's reply gives, or the cause for which nobody answered."""
    if result.action == "decline":
        return Answer(Choice.DENY, by=by)
    if result.action == "cancel":
        return CANCELLED_AT_CLIENT
    content = result.content or {}
    choice, reason = content.get("choice"), content.get("reason")
    if not isinstance(choice, str) or choice not in {c.value for c in Choice}:
        return "the MCP client's answer was not one of once, session, always, deny"
    text = " ".join(reason.split())[:500] if isinstance(reason, str) else ""
    return Answer(Choice(choice), reason=text or None, by=by)


async def ask_client(
    gate: Gate,
    session: ServerSession,
    request: PendingApproval,
    *,
    by: str,
    related: RequestId | None,
) -> None:
    """Put ``request`` to the client's user; returns once it settled or the client replied.

    A reply that is an answer answers it (unless something else did first); a
    reply that is not ends it ``cancelled`` with the cause.
    """
    loop = asyncio.get_running_loop()
    settled = asyncio.Event()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone (shutdown)
            loop.call_soon_threadsafe(settled.set)

    request.when_settled(wake)

    async def elicit(scope: anyio.CancelScope) -> None:
        try:
            result = await session.elicit_form(consent_message(request), CONSENT_SCHEMA, related)
            outcome = answer_of(result, by)
        except MCPError as exc:
            closed = exc.error.code == CONNECTION_CLOSED
            outcome = (
                CLOSED
                if closed  # (the client's own words, on one line: a record is one line)
                else f"the MCP client could not ask: {' '.join(exc.error.message.split())[:200]}"
            )
        except Exception as exc:  # an unreadable reply: nobody answered
            outcome = f"the MCP client's reply was unusable ({type(exc).__name__})"
        await apply_reply(gate, request, outcome)
        scope.cancel()

    async def watch(scope: anyio.CancelScope) -> None:
        await settled.wait()
        scope.cancel()  # answered elsewhere or timed out: withdraw the elicitation

    async with anyio.create_task_group() as group:
        group.start_soon(elicit, group.cancel_scope)
        group.start_soon(watch, group.cancel_scope)


async def apply_reply(gate: Gate, request: PendingApproval, outcome: Answer | str) -> None:
    """Answer ``request`` with the client's answer, or cancel it with the cause ``outcome``."""
    with anyio.CancelScope(shield=True):  # the reply arrived: it is applied, whatever follows
        if isinstance(outcome, str):
            request.cancel(outcome)
            return
        try:
            if outcome.choice is Choice.ALWAYS:  # recorded (fsync) and its rule saved first
                await asyncio.to_thread(gate.answer, request, outcome)
            else:
                gate.answer(request, outcome)
        except AnswerNotSaved as exc:
            # docs/operations.md#a-full-disk: the prompt stays open for another answer.
            log.warning("the MCP client's always answer was not saved: %s", exc)
