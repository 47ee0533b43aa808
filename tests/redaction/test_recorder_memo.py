"""docs/redaction.md: audit-grade redaction remembers short texts, never across a change of secrets."""

from __future__ import annotations

from collections.abc import Callable

from multiplex import Supervisor
from tests.conftest import HomeFactory

SECRET = "zq-added-later-7f3e9a1c55"


def test_a_text_seen_before_its_secret_existed_is_masked_once_it_does(
    make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]
) -> None:
    home = make_home("p", "approvals:\n  mode: strict\n", "OTHER=nothing-secret-here-000\n")
    sup = supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    redact = sup.gate.recorder.redact
    text = f"token {SECRET} in a line"
    assert redact(text) == text  # not a secret yet, and now remembered
    assert redact(text) == text
    (home / ".env").write_text(f"OTHER=nothing-secret-here-000\nAPI_KEY={SECRET}\n")
    assert sup.reload("p").result == "ok"
    assert SECRET not in redact(text)
    assert SECRET not in redact(text)
    long = text + " " + "x" * 300  # past what is remembered: the same answer
    assert SECRET not in redact(long)
    # The secret leaves the home: it is no longer masked (nothing stale either way).
    (home / ".env").write_text("OTHER=nothing-secret-here-000\n")
    assert sup.reload("p").result == "ok"
    assert redact(text) == text
