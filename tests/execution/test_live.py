"""Live output (docs/execution.md#live-output): whole lines, redacted, nothing twice, nothing lost.

Hostile: a secret of the home's ``.env`` written in two pieces, a pause between
them, must never reach the live sink in halves that each escape redaction.
"""

from __future__ import annotations

from collections.abc import Callable

from multiplex import Supervisor
from tests.conftest import HomeFactory

SECRET = "sk-live-abcdef0123456789abcdef"


def test_live_output_is_redacted_whole_lines(
    make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]
) -> None:
    make_home(
        "h",
        'approvals: {mode: "off"}\nsecurity: {redact_secrets: true}\n',
        env=f"SERVICE_API_KEY={SECRET}\n",
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: h\nwatch: {mode: off}\n")
    seen: list[tuple[str, str]] = []
    half = len(SECRET) // 2
    command = (
        f"printf 'key={SECRET[:half]}'; sleep 0.3; printf '{SECRET[half:]}\\nnext\\n'; "
        "echo oops >&2; printf 'no newline at the end'"
    )
    result = sup.run(command, profile="h", on_output=lambda s, t: seen.append((s, t)))
    assert result.exit_code == 0, result.stderr
    stdout = "".join(t for s, t in seen if s == "stdout")
    assert stdout == result.stdout  # all of it, once, as the result holds it
    assert "".join(t for s, t in seen if s == "stderr") == result.stderr == "oops\n"
    assert SECRET not in stdout and SECRET[:half] not in stdout and SECRET[half:] not in stdout
    assert stdout.endswith("next\nno newline at the end")
    assert all(t.endswith("\n") for s, t in seen if s == "stdout" and "no newline" not in t)
