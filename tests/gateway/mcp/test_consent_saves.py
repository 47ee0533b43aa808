"""The MCP client's prompt says exactly what "always" saves (docs/approvals.md#suggestions)."""

from __future__ import annotations

from multiplex.approval.waiting._pending import PendingApproval
from multiplex.approval.waiting._prompt import CallbackPrompter
from multiplex.gateway.mcp._consent import consent_message


def test_the_consent_message_names_the_rule_and_its_bound_file(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "approvals:\n  mode: strict\n", files={"workspace/package.json": "{}\n"})
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    asked: list[PendingApproval] = []
    sup.gate.set_prompter(CallbackPrompter(lambda r: asked.append(r) or "deny"))
    sup.run("npm run test:unit", profile="p", context="interactive")
    message = consent_message(asked[0])
    assert message.endswith(
        "Answer once, session, always (saves the allowlist rule: npm run test:unit,"
        " bound to package.json) or deny."
    ), message
