"""Asking a 2026-07-28 (per-request) client: the consent as an ``InputRequiredResult`` (docs/agents.md#asking-through-the-client).

Such a client has no channel for a server's request, so the tool call
answers "input required" with the same ``elicitation/create`` form, and the
client calls again with its user's reply and the ``request_state`` it was
given: ``<run_id> <approval_id>``, a pointer only, checked against the
caller's profile on the way back. Meanwhile the run stays parked and its
approval an ordinary pending one (first answer wins); a client that never
calls again leaves it to the dashboard or to ``approvals.timeout``.
"""

from __future__ import annotations

from mcp_types import (
    CallToolRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)

from multiplex.approval.waiting._pending import PendingApproval
from multiplex.gateway.mcp._consent import CONSENT_SCHEMA, consent_message

__all__ = ["CONSENT_KEY", "consent_round", "reply_of", "state_of"]

CONSENT_KEY = "consent"


def consent_round(request: PendingApproval, run_id: str) -> InputRequiredResult:
    """The input-required answer that puts ``request`` to the client's user."""
    ask = ElicitRequest(
        params=ElicitRequestFormParams(
            message=consent_message(request), requested_schema=CONSENT_SCHEMA
        )
    )
    return InputRequiredResult(
        input_requests={CONSENT_KEY: ask}, request_state=f"{run_id} {request.id}"
    )


def state_of(params: CallToolRequestParams) -> tuple[str, str] | None:
    """``(run_id, approval_id)`` of a retried call, or None for a first call; ValueError if unreadable."""
    state = params.request_state
    if state is None:
        return None
    run_id, _, approval_id = state.partition(" ")
    if not run_id.startswith("run-") or not approval_id.startswith("ap-"):
        raise ValueError("request_state is not one multiplex gave")
    return run_id, approval_id


def reply_of(params: CallToolRequestParams) -> ElicitResult | None:
    """The client's reply to the consent form, if the retried call carries one."""
    reply = (params.input_responses or {}).get(CONSENT_KEY)
    return reply if isinstance(reply, ElicitResult) else None
