"""``SandboxInfo.started`` closes its write end once: a second call never closes another file."""

from __future__ import annotations

import os
from pathlib import Path

from multiplex.execution.sandbox._sandbox import SandboxInfo


def test_a_second_started_call_leaves_a_reused_fd_number_alone(tmp_path: Path) -> None:
    info = SandboxInfo()
    number = info.fd
    info.started()  # after the start
    # The number is free now: another thread's open may get it (here: made sure of).
    opened = os.open(tmp_path / "decisions.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    fd = os.dup2(opened, number) if opened != number else opened
    if opened != number:
        os.close(opened)
    try:
        info.started()  # at cleanup: must not close the decision log opened meanwhile
        os.write(fd, b"{}\n")  # EBADF here was the bug
    finally:
        os.close(fd)
    assert (tmp_path / "decisions.jsonl").read_bytes() == b"{}\n"
