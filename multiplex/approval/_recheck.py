"""Step 11 of the gate: the check just before a command runs (docs/approvals.md#order-of-checks).

A decision may be minutes old when its command starts (a human took time to
answer): a deny rule added meanwhile blocks it, and so does the removal of the
rule that allowed it, the file's or the session's.
"""

from __future__ import annotations

from collections.abc import Callable

from multiplex.approval._decision import DecidedBy, Decision, Outcome
from multiplex.approval._static_checks import deny_set
from multiplex.scopes import ProfileView
from multiplex.shell import ParsedLine, RuleSet, deny_match

__all__ = ["recheck_decision"]


def recheck_decision(
    decision: Decision,
    parsed: ParsedLine,
    view: ProfileView,
    allowlist: RuleSet,
    session_grants: Callable[[], RuleSet],
    cwd: Callable[[], str | None] = lambda: None,
) -> Decision:
    """``decision`` (approved) as it stands against the profile's current rules."""
    if view.epoch != decision.epoch:
        denied = deny_match(deny_set(view.approvals.deny), parsed, cwd=cwd())
        if denied is not None:
            return Decision(
                Outcome.BLOCKED,
                "revoked while waiting: deny rule added",
                DecidedBy.RULE,
                denied[0],
                view.epoch,
                decision.waited_ms,
            )
    if decision.decided_by is DecidedBy.RULE:
        rest = [c for c in parsed.commands if not allowlist.matches(c.assignments + c.argv)]
        # The session's grants are read only when the file's rules do not cover the
        # line (in a cluster that read is a Redis round trip: docs/cluster.md#cost).
        grants = session_grants() if rest else None
        if grants is not None and not all(grants.matches(c.assignments + c.argv) for c in rest):
            return Decision(
                Outcome.BLOCKED,
                "revoked while waiting: allowlist rule removed",
                DecidedBy.RULE,
                decision.rule,
                view.epoch,
                decision.waited_ms,
            )
    return decision
