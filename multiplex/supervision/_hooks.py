"""An agent's own pre-tool hook asks the gate: allow, deny or ask (docs/agents.md).

Claude Code's ``PreToolUse`` and Gemini CLI's ``BeforeTool`` hooks hand over
one tool call as JSON. :func:`answer_hook` reads it, judges a shell command
with :meth:`Supervisor.test` (pure: nothing runs, nobody is asked here),
records the answer in the profile's ``logs/decisions.jsonl`` and returns the
agent's documented reply. Fail closed: what cannot be read is never allowed.
"""

from __future__ import annotations

import enum
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multiplex._errors import MultiplexError
from multiplex.approval._decision import (
    Danger,
    DecidedBy,
    Decision,
    Outcome,
    Verdict,
    VerdictOutcome,
)
from multiplex.scopes import ContextKind

if TYPE_CHECKING:
    from multiplex.supervision._supervisor import Supervisor

__all__ = ["MAX_HOOK_INPUT", "HookAgent", "HookAnswer", "answer_hook"]

# Beyond this the payload is not read at all (an exit-2 refusal): a command line
# this long is no tool call a human could review either.
MAX_HOOK_INPUT = 1 << 20
# docs/agents.md#sessions: an agent's session id longer than this is not one.
_MAX_SESSION = 200
_NO_SESSION = "hook"


class HookAgent(enum.StrEnum):
    """The agents whose hook protocol multiplex speaks (docs/agents.md)."""

    CLAUDE_CODE = "claude-code"
    GEMINI = "gemini"

    @property
    def event(self) -> str:
        return "PreToolUse" if self is HookAgent.CLAUDE_CODE else "BeforeTool"

    @property
    def shell_tool(self) -> str:
        return "Bash" if self is HookAgent.CLAUDE_CODE else "run_shell_command"


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """The reply to one hook call: what the agent is told and how the hook exits.

    ``verdict`` is ``allow``, ``deny`` or ``ask`` (what multiplex's gate says),
    ``None`` when the call is no shell command (no opinion). ``refusal`` is set
    when the payload is not a tool call at all: the hook exits 2 with it on
    stderr, which both agents treat as blocking.
    """

    agent: HookAgent
    verdict: str | None
    reason: str = ""
    refusal: str | None = None

    @property
    def exit_code(self) -> int:
        return 2 if self.refusal is not None else 0

    @property
    def told(self) -> str | None:
        """What the agent is told: Gemini's hook cannot hand a prompt to its user,
        so an ``ask`` reaches it as ``deny`` (docs/agents.md#gemini-cli-hook)."""
        if self.verdict == "ask" and self.agent is HookAgent.GEMINI:
            return "deny"
        return self.verdict

    def stdout(self) -> str:
        """The JSON the agent's documented hook protocol reads, or ``""``."""
        told = self.told
        if self.refusal is not None or told is None:
            return "{}\n" if self.agent is HookAgent.GEMINI and self.refusal is None else ""
        if self.agent is HookAgent.CLAUDE_CODE:
            out: dict[str, Any] = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": told,
                    "permissionDecisionReason": self.reason,
                }
            }
        else:
            out = {"decision": told, "reason": self.reason}
        return json.dumps(out, ensure_ascii=False) + "\n"


@dataclass(frozen=True, slots=True)
class _Call:
    session: str
    turn: str
    cwd: str | None
    command: str | None
    problem: str | None  # why a shell call's command cannot be judged


def _read(raw: bytes, agent: HookAgent) -> _Call | HookAnswer:
    if len(raw) > MAX_HOOK_INPUT:
        return _refuse(agent, f"hook input is over {MAX_HOOK_INPUT} bytes; not read")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return _refuse(agent, f"hook input is not JSON ({type(exc).__name__})")
    if not isinstance(data, dict):
        return _refuse(agent, f"hook input is not a JSON object of a {agent.event} hook")
    event, tool = data.get("hook_event_name"), data.get("tool_name")
    if event != agent.event:
        return _refuse(agent, f"hook_event_name is {event!r}, not {agent.event!r}")
    if not isinstance(tool, str) or not tool:
        return _refuse(agent, "tool_name is missing or not a string")
    if tool != agent.shell_tool:
        return HookAnswer(agent, None)
    session = data.get("session_id")
    if not isinstance(session, str) or not session or len(session) > _MAX_SESSION:
        session = _NO_SESSION  # judged without any session's grants: never less strict
    use_id = data.get("tool_use_id")
    turn = use_id if isinstance(use_id, str) and use_id else f"hook-{secrets.token_hex(6)}"
    cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
    tool_input = data.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    problem = None
    if not isinstance(tool_input, dict):
        problem = "tool_input is missing or not an object"
    elif not isinstance(command, str):
        problem = "tool_input.command is missing or not a string"
        command = None
    elif not command.strip():
        problem = "tool_input.command is empty"
    return _Call(session, turn[:_MAX_SESSION], cwd, command, problem)


def _refuse(agent: HookAgent, why: str) -> HookAnswer:
    return HookAnswer(agent, None, refusal=f"multiplex hook {agent.value}: {why}")


def answer_hook(sup: Supervisor, profile: str, raw: bytes, agent: HookAgent) -> HookAnswer:
    """Judge the tool call in ``raw`` with ``profile``'s gate, record it, and say what to reply.

    Nothing is run and nobody is asked: an ``ask`` is handed to the agent's own
    prompt (Claude Code) or told as ``deny`` (Gemini CLI). A call that cannot
    be read is refused (exit 2); a shell call whose command cannot be read is
    an ``ask`` naming the problem; a profile that cannot judge (not loaded)
    raises :class:`~multiplex.MultiplexError` (the CLI exits 2: blocking).
    """
    call = _read(raw, agent)
    if isinstance(call, HookAnswer):
        return call
    name = Path(profile).name
    if call.command is None or call.problem is not None:
        reason = f"multiplex profile {name!r} cannot judge this call: {call.problem}"
        if agent is HookAgent.GEMINI:
            reason += _GEMINI_ASK
        answer = HookAnswer(agent, "ask", reason)
        _record_ask(sup, name, call, call.command or "", reason, (), answer)
        return answer
    # The agent runs what is allowed: a limited grant's use is taken (docs/allowlist.md#uses).
    verdict = sup.test(
        name, call.command, context=ContextKind.HOOK, session=call.session, spend=True
    )
    recorder = sup.gate.recorder
    dangers = "".join(
        f"; danger {d.pattern}: {recorder.redact(d.segment)}" for d in verdict.dangers
    )
    if verdict.outcome is VerdictOutcome.ASK:
        reason = f"multiplex profile {name!r} would ask a human: {_why(verdict)}{dangers}"
        if agent is HookAgent.GEMINI:
            reason += _GEMINI_ASK
        answer = HookAnswer(agent, "ask", reason)
        _record_ask(sup, name, call, call.command, reason, verdict.dangers, answer)
        return answer
    approved = verdict.outcome is VerdictOutcome.APPROVED
    decision = Decision(
        Outcome.APPROVED if approved else Outcome.BLOCKED,
        verdict.cause,
        verdict.decided_by or DecidedBy.POLICY,
        verdict.rule,
        sup.view(name).epoch,
    )
    reason = f"multiplex profile {name!r}: {recorder.redact(_told(decision))}{dangers}"
    answer = HookAnswer(agent, "allow" if approved else "deny", reason)
    recorder.record(
        profile=name,
        home=sup.profile(name).home,
        session=call.session,
        turn_id=call.turn,
        context=ContextKind.HOOK.value,
        command=call.command,
        decision=decision,
        extra=_extra(call, answer),
        dangers=verdict.dangers,
    )
    return answer


_GEMINI_ASK = (
    "; Gemini CLI's hook cannot ask its user, so it did not run and nobody refused it:"
    " the user can allow it in the profile (multiplex allowlist add)"
)
_BY = {DecidedBy.RULE: "a rule", DecidedBy.SMART: "the smart approver"}


def _told(decision: Decision) -> str:
    # The gate's own words (docs/approvals.md#outcomes-and-what-the-agent-sees),
    # without doubling the period many causes end with.
    cause = decision.cause.rstrip(".")
    rule = f" (rule: {decision.rule})" if decision.rule else ""
    if decision.approved:
        return f"approved by {decision.decided_by.value}: {cause}{rule}"
    by = _BY.get(decision.decided_by, "policy")
    return f"BLOCKED by {by}: {cause}{rule}. No user was asked"


def _why(verdict: Verdict) -> str:
    # The check that asked and its detail (docs/approvals.md#what-a-prompt-shows),
    # else the gate's cause ("a human must approve").
    for step in verdict.trace:
        if step.result in ("ask", "escalate") and step.step != "ask":
            return f"{step.step}: {step.detail}" if step.detail else step.step
    return verdict.cause


def _extra(call: _Call, answer: HookAnswer) -> dict[str, Any]:
    return {
        "kind": "hook",
        "agent": answer.agent.value,
        "verdict": answer.verdict,
        "told": answer.told,
        "agent_cwd": call.cwd,
    }


def _record_ask(
    sup: Supervisor,
    name: str,
    call: _Call,
    command: str,
    reason: str,
    dangers: tuple[Danger, ...],
    answer: HookAnswer,
) -> None:
    # docs/approvals.md#records: an ask handed over is no outcome of the gate's
    # (nobody here approved, denied or ignored it), so it is kept as what it is.
    handed = "claude-code" if answer.told == "ask" else None
    cause = (
        f"{reason}; handed to Claude Code's own permission prompt"
        if handed
        else f"{reason}; told deny"
    )
    try:
        epoch = sup.view(name).epoch
    except MultiplexError:
        epoch = None
    sup.gate.recorder.record_handed_over(
        profile=name,
        home=sup.profile(name).home,
        session=call.session,
        turn_id=call.turn,
        context=ContextKind.HOOK.value,
        command=command,
        cause=cause,
        epoch=epoch,
        dangers=dangers,
        extra={**_extra(call, answer), "handed_to": handed},
    )
