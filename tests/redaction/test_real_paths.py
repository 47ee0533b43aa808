"""docs/security.md#disguised-secrets: disguised known values through the real paths.

A profile's ``.env`` secret, passed through a real command's output reversed,
as base32, as hex and folded across lines, and written into a command line in
quoted pieces: neither the result, the prompt an approver sees, nor
``decisions.jsonl`` shows it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest

from multiplex import Outcome, Supervisor
from multiplex.approval.waiting._pending import Answer, Choice
from multiplex.supervision import ParkedRun
from tests.conftest import HomeFactory

SECRET = "sk-alphaSECRETvalue42"
_RUNS = "terminal:\n  sandbox: none\n  env_passthrough: [API_KEY]\n"


def _records(sup: Supervisor, profile: str) -> list[dict[str, object]]:
    path = sup.profile(profile).home / "logs" / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def sup(make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]) -> Supervisor:
    make_home("open", _RUNS + "approvals:\n  mode: 'off'\n", f"API_KEY={SECRET}\n")
    make_home(
        "strict", _RUNS + "approvals:\n  mode: strict\n  timeout: 30\n", f"API_KEY={SECRET}\n"
    )
    return supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")


@pytest.mark.parametrize(
    ("pipe", "printed"),
    [
        ("rev", SECRET[::-1]),
        ("base32", base64.b32encode(SECRET.encode()).decode()),
        ("base32 | tr A-Z a-z", base64.b32encode(SECRET.encode()).decode().lower()),
        ("xxd -p", SECRET.encode().hex()),
        ("od -An -tx1 | tr -d ' \\n'", SECRET.encode().hex()),
        ("tr a-z A-Z", SECRET.upper()),
        ("sed 's/./& /g'", " ".join(SECRET) + " "),
        ("fold -w 4", "\n".join(SECRET[i : i + 4] for i in range(0, len(SECRET), 4))),
        (
            "base64 -w 6",
            "\n".join(
                base64.b64encode(SECRET.encode()).decode()[i : i + 6] for i in range(0, 28, 6)
            ),
        ),
    ],
    ids=["rev", "base32", "base32-lower", "xxd", "od", "upper", "spaced", "fold", "base64-wrapped"],
)
def test_a_runs_output_holding_a_disguised_value_is_masked(
    sup: Supervisor, pipe: str, printed: str
) -> None:
    result = sup.run(f'printf %s "$API_KEY" | {pipe}; echo', profile="open")
    assert result.exit_code == 0, result.stderr
    assert "[REDACTED:known]" in result.stdout
    flat = result.stdout.replace("\n", "").replace(" ", "")
    for shown in (printed, printed.replace("\n", "").replace(" ", "")):
        assert shown.strip() not in result.stdout and shown.strip() not in flat


def test_a_quoted_value_never_reaches_the_prompt_or_the_record(sup: Supervisor) -> None:
    command = "echo sk-alpha''SECRET\"value\"42 | rev"
    step = sup.run_or_park(command, profile="strict", session="s", run_id="r1")
    assert isinstance(step, ParkedRun), step
    display = step.request.display  # what the dashboard, the CLI and GET /v1/approvals show
    assert display == "echo [REDACTED:known] | rev"
    assert step.request.answer(Answer(Choice.ONCE, by="admin"))
    result = step.resume()
    assert result.decision.outcome is Outcome.APPROVED
    assert result.stdout == "[REDACTED:known]\n"  # the reversed value the command printed
    (record,) = _records(sup, "strict")
    assert record["command"] == "echo [REDACTED:known] | rev"
    text = json.dumps(record)
    assert "SECRET" not in text and "sk-alpha" not in text


def test_an_ansi_c_quoted_value_is_masked_in_the_record(sup: Supervisor) -> None:
    hexed = "".join(f"\\x{b:02x}" for b in SECRET[:6].encode())
    command = f"printf %s $'{hexed}'{SECRET[6:]} > /dev/null"
    result = sup.run(command, profile="open")
    assert result.exit_code == 0
    (record,) = _records(sup, "open")
    assert record["command"] == "printf %s [REDACTED:known] > /dev/null"
