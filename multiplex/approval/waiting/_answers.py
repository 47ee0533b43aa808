"""From how a wait ended to a truthful Decision (docs/approvals.md#outcomes-and-what-the-agent-sees), and what an answer saves."""

from __future__ import annotations

from multiplex._errors import RuleSyntaxError
from multiplex.approval._decision import DecidedBy, Decision, Outcome
from multiplex.approval.records._records import MCP_CLIENT
from multiplex.approval.waiting._pending import Answer, Choice, Resolution
from multiplex.shell import ParsedLine, exact_rule

__all__ = ["decision_for", "rules_to_save"]


def rules_to_save(parsed: ParsedLine, answer: Answer) -> list[str]:
    """The rules a ``session``/``always`` answer grants.

    docs/allowlist.md#rules: the exact command (each simple command, globs escaped) or the
    prefix the approver chose; never a detector category. An unparseable line
    saves nothing.
    """
    if answer.choice not in (Choice.SESSION, Choice.ALWAYS):
        return []
    if answer.rule:
        return [answer.rule]
    if parsed.error is not None:
        return []
    rules: list[str] = []
    for command in parsed.commands:
        if command.argv and not command.writes_file:
            # With its assignments (FOO=1 make deploy): the rule covers what was approved,
            # as rules are matched (docs/allowlist.md#rules), not the bare command.
            try:
                text = exact_rule(command.assignments + command.argv).text
            except RuleSyntaxError:  # a control character: no rule holds it, none is saved
                continue
            if text not in rules:
                rules.append(text)
    return rules


def decision_for(
    res: Resolution, *, epoch: int, timeout: float, saved: list[str]
) -> tuple[Decision, str]:
    """The decision and the hook's ``choice`` for a resolved wait.

    ``denied`` only for a human's deny; nobody answering is ``timeout`` or
    ``cancelled`` with its cause.
    """
    waited = res.waited_ms
    if res.timed_out:
        cause = f"no answer within {timeout:g}s"
        return Decision(Outcome.TIMEOUT, cause, DecidedBy.NOBODY, None, epoch, waited), "timeout"
    answer = res.answer
    if answer is None:
        cause = res.cancelled or "withdrawn"
        return Decision(
            Outcome.CANCELLED, cause, DecidedBy.NOBODY, None, epoch, waited
        ), "cancelled"
    # docs/agents.md#asking-through-the-client: an MCP client's user is named as such.
    who = "the user at the MCP client" if answer.by.startswith(MCP_CLIENT) else "user"
    if answer.choice is Choice.DENY:
        cause = f"denied by {who}: {answer.reason}" if answer.reason else f"denied by {who}"
        return Decision(Outcome.DENIED, cause, DecidedBy.USER, None, epoch, waited), "deny"
    rule = "; ".join(saved) if saved else None
    cause = f"approved by {who} ({answer.choice.value})"
    return Decision(
        Outcome.APPROVED, cause, DecidedBy.USER, rule, epoch, waited
    ), answer.choice.value
