"""docs/approvals.md#records: every outcome is counted under its own label; none is "unknown"."""

from __future__ import annotations

import threading
import time

from multiplex import Outcome
from multiplex.approval.waiting._pending import Answer, Choice


def test_every_outcome_is_counted(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "p", "approvals:\n  timeout: 1\n  deny: ['git push *']\ncommand_allowlist: ['ls *']\n"
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")
    seen: dict[Outcome, int] = {}

    def note(result) -> None:  # type: ignore[no-untyped-def]
        seen[result.decision.outcome] = seen.get(result.decision.outcome, 0) + 1

    note(sup.run("ls -la", profile="p", context="cron"))  # approved (rule)
    note(sup.run("git push origin x", profile="p", context="cron"))  # blocked (rule)
    note(sup.run("rm -rf ./x", profile="p", context="api"))  # timeout
    for choice, run_id in ((Choice.DENY, "r1"), (None, "r2")):
        box: list[object] = []
        thread = threading.Thread(
            target=lambda r=run_id, b=box: b.append(
                sup.run("rm -rf ./y", profile="p", context="api", run_id=r)
            )
        )
        thread.start()
        while not sup.gate.tables().get("p") or not sup.gate.tables()["p"].list_open():
            time.sleep(0.01)
        request = sup.gate.tables()["p"].list_open()[0]
        if choice is None:
            sup.gate.cancel_run(run_id)
        else:
            request.answer(Answer(choice))
        thread.join(10)
        note(box[0])
    assert set(seen) == set(Outcome)
    text = sup.metrics.render().decode()
    for outcome in Outcome:
        assert f'outcome="{outcome.value}"' in text
    assert "unknown" not in text
    pending = sup.metrics.registry.get_sample_value("multiplex_pending_approvals", {"profile": "p"})
    assert pending == 0
