"""Cancelling a run over HTTP stops the command it is running, whole tree included (docs/execution.md#no-process-outlives-its-run)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.gateway.conftest import Gateway


def _with_cmdline(word: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if word in Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_cancel_stops_the_running_command_and_its_setsid_children(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    line = "setsid sleep 31.4242 & sleep 32.4242"
    run_id, pending = api.parked([line], session_id="s-kill")
    assert api.answer(run_id, pending["approval_id"], "once").status_code == 200
    api.wait(run_id, "running")
    deadline = time.monotonic() + 10
    while not _with_cmdline(b"31.4242") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _with_cmdline(b"31.4242"), "the command never started"
    assert api.post(f"/v1/runs/{run_id}/cancel").status_code == 200
    run = api.wait(run_id)
    assert run["status"] == "cancelled"
    assert run["results"][0]["exit_code"] is None
    assert "[multiplex: cancelled]" in run["results"][0]["stderr"]
    deadline = time.monotonic() + 5
    while _with_cmdline(b"31.4242") + _with_cmdline(b"32.4242") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _with_cmdline(b"31.4242") + _with_cmdline(b"32.4242") == []
