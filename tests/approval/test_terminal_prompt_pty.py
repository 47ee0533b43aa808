"""The terminal prompt on a real pseudo-terminal: ``multiplex exec`` asks the person at
it, says why once, and answers them in words meant for them
(docs/approvals.md#what-a-prompt-shows)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EGRESS = """\
terminal:
  egress:
    allow: [pypi.org, "*.pythonhosted.org"]
"""


def _read_until(fd: int, want: str, seen: list[str], limit: float = 60.0) -> str:
    """Read the terminal until ``want`` appears (bounded), return all it printed."""
    deadline = time.monotonic() + limit
    while want not in "".join(seen):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{want!r} never appeared; the terminal showed:\n{''.join(seen)}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"{want!r} never appeared:\n{''.join(seen)}")
            seen.append(chunk.decode(errors="replace"))
    return "".join(seen).replace("\r\n", "\n")


def _exec_on_a_pty(config: Path, command: str, answer: str) -> tuple[str, int]:
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "multiplex",
            "--config",
            str(config),
            "exec",
            "-p",
            "p",
            "--",
            command,
        ],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        cwd=config.parent,
        close_fds=True,
    )
    os.close(secondary)
    seen: list[str] = []
    try:
        _read_until(primary, "[d]eny", seen)
        os.write(primary, answer.encode() + b"\r")
        code = proc.wait(timeout=60)
        while select.select([primary], [], [], 0.2)[0]:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen.append(chunk.decode(errors="replace"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(primary)
    return "".join(seen).replace("\r\n", "\n"), code


def test_the_prompt_speaks_to_the_person_at_the_terminal(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", EGRESS)
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    screen, code = _exec_on_a_pty(config, "rm -rf ./no-such-dir", "d")
    assert code == 4, screen  # denied
    assert "The agent wants to run (profile p, session cli):\n    rm -rf ./no-such-dir\n" in screen
    assert "(context interactive)" in screen and "Asked:" in screen
    assert "network: out through the egress proxy to pypi.org, *.pythonhosted.org only" in screen
    why = [line for line in screen.splitlines() if "Why you are asked:" in line]
    assert why == [
        "  Why you are asked: recursive-delete: Deletes recursively or by force (rm -r/-f)."
    ], screen
    assert screen.count("recursive-delete") == 1, screen  # the why, once
    # What comes back after the answer is for the human who gave it.
    assert "multiplex: denied (denied by user): the command did not run" in screen
    for agent_words in ("Do not retry", "ask the user", "BLOCKED"):
        assert agent_words not in screen, screen
    # A person at a terminal answered: the record says so (a pipe's answer says stdin).
    last = (config.parent / "profiles/p/logs/decisions.jsonl").read_text().splitlines()[-1]
    assert '"by": "terminal"' in last and '"answered_by": "terminal"' in last, last
