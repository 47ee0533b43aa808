"""docs/approvals.md#suggestions: what "always" saves, the rules it could save instead, with counts."""

from __future__ import annotations

import io
import threading
import time

from multiplex import Outcome, Supervisor
from multiplex.approval import TerminalPrompter, suggest
from multiplex.approval.grants._suggest import candidates
from multiplex.approval.waiting._pending import PendingApproval
from multiplex.approval.waiting._prompt import CallbackPrompter


def test_candidates_run_from_exact_to_wider_and_never_cut_after_an_option() -> None:
    assert candidates(["npm", "run", "test:unit", "--", "--watch"]) == [
        "npm run test:unit -- --watch",
        "npm run test:unit *",
        "npm run test:* *",  # `npm run test:*` would not allow `-- --watch`
        "npm run *",
    ]
    assert candidates(["npm", "run", "test:unit"])[1] == "npm run test:*"
    assert candidates(["rm", "-rf", "./data"]) == ["rm -rf ./data"]  # never `rm -rf *`
    assert candidates(["python3", "build.py"]) == ["python3 build.py"]  # never `python3 *`
    assert candidates(["ls", "*.bak"]) == ["ls '[*].bak'"]  # the exact rule stays exact


def _sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home(
        "p",
        "approvals:\n  mode: strict\n  timeout: 30\n",
        files={"workspace/package.json": "{}\n"},
    )
    return supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")  # type: ignore[no-any-return]


def test_counts_come_from_the_profiles_recorded_decisions(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of)
    sup.gate.set_prompter(CallbackPrompter(lambda r: "deny"))
    for line in ("npm run test:unit", "npm run test:e2e", "npm run build"):
        sup.run(line, profile="p", context="interactive")
    profile = sup.profiles["p"]
    found = suggest("npm run test:unit -- --watch", profile.home, profile.home / "workspace")
    assert [(s.rule, s.matched, s.saves) for s in found] == [
        ("npm run test:unit -- --watch", 0, True),
        ("npm run test:unit *", 1, False),
        ("npm run test:* *", 2, False),
        ("npm run *", 3, False),
    ]
    assert all(s.bind == ("package.json",) for s in found), found


def test_the_request_carries_them_and_an_always_answer_may_pick_one(
    make_home, supervisor_of
) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of)
    asked: list[PendingApproval] = []

    def pick(request: PendingApproval) -> str | None:
        asked.append(request)
        return None  # answered below

    sup.gate.set_prompter(CallbackPrompter(pick))
    box: list[object] = []
    thread = threading.Thread(
        target=lambda: box.append(sup.run("npm run test:unit", profile="p", context="interactive"))
    )
    thread.start()
    while not asked:
        time.sleep(0.01)
    request = asked[0]
    rows = request.as_dict()["suggestions"]
    assert [r["rule"] for r in rows] == ["npm run test:unit", "npm run test:*", "npm run *"]  # type: ignore[index]
    from multiplex.approval import Answer, Choice

    assert sup.gate.answer(request, Answer(Choice.ALWAYS, rule="npm run test:*"))
    thread.join(30)
    assert box[0].decision.outcome is Outcome.APPROVED  # type: ignore[attr-defined]
    (grant,) = sup.profiles["p"].allowlist.grants()
    assert grant.rule == "npm run test:*" and [n for n, _ in grant.bind] == ["package.json"]
    assert sup.test("p", "npm run test:e2e").cause == "allowlisted"


class _Lines(io.StringIO):
    """A terminal's input that hands out a line only once the prompt was written."""

    def __init__(self, reply: str, out: io.StringIO) -> None:
        super().__init__()
        self._reply, self._out = reply, out

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        while "> " not in self._out.getvalue():
            time.sleep(0.01)
        return self._reply


def test_the_terminal_prompt_says_what_always_saves_and_takes_a_number(
    make_home, supervisor_of
) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of)
    out = io.StringIO()
    sup.gate.set_prompter(TerminalPrompter(_Lines("3\n", out), out))
    result = sup.run("npm run test:unit", profile="p", context="interactive")
    shown = out.getvalue()
    assert (
        "always saves: [1] npm run test:unit    (0 recorded decisions matched, bound to package.json)"
        in shown
    )
    assert "or:           [3] npm run *" in shown and "[d]eny or 1-3 > " in shown
    assert result.decision.outcome is Outcome.APPROVED
    assert [g.rule for g in sup.profiles["p"].allowlist.grants()] == ["npm run *"]


def test_an_interpreters_script_stays_exact_past_its_options() -> None:
    # `python3 -W ignore build.py` offered `python3 -W ignore *`: any script at all.
    assert candidates(["python3", "-W", "ignore", "build.py"]) == ["python3 -W ignore build.py"]
    assert candidates(["python3", "-X", "dev", "build.py"]) == ["python3 -X dev build.py"]
    assert candidates(["bash", "-o", "errexit", "run.sh", "x"]) == [
        "bash -o errexit run.sh x",
        "bash -o errexit run.sh *",  # the script stays; its arguments may vary
    ]
    assert candidates(["python3", "-m", "pytest", "-q"])[1] == "python3 -m pytest *"


def test_a_script_after_an_options_value_is_the_one_bound(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from multiplex.approval.grants._bound_files import files_run

    (tmp_path / "build.py").write_text("print(1)\n")
    (tmp_path / "run.sh").write_text("true\n")
    (tmp_path / "ignore").write_text("not a script\n")
    assert files_run(["python3", "-W", "ignore", "build.py"], tmp_path) == ["build.py"]
    assert files_run(["python3", "-X", "dev", "build.py"], tmp_path) == ["build.py"]
    assert files_run(["bash", "-o", "errexit", "run.sh"], tmp_path) == ["run.sh"]
