"""Graceful shutdown kills commands still running after the grace period (docs/gateway.md ops)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from tests.conftest import write_home


def test_commands_running_past_the_grace_are_killed(tmp_path: Path) -> None:
    marker = tmp_path / "survived"
    write_home(tmp_path / "profiles", "p", "approvals:\n  mode: off\nterminal:\n  timeout: 120\n")
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: p\nwatch: {mode: off}\n")
    sup = Supervisor.from_config(config)
    server = GatewayServer(
        sup, admin_token="admin-token-for-test-0123456789", port=0, grace=1.0
    ).start()
    headers = {"Authorization": "Bearer admin-token-for-test-0123456789"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=10) as client:
        run_id = client.post("/v1/runs", json={"commands": [f"sleep 60; touch {marker}"]}).json()[
            "run_id"
        ]
        deadline = time.monotonic() + 10
        while len(sup.processes) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(sup.processes) == 1
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 20  # not the command's 60 s
    assert len(sup.processes) == 0
    run = server.gateway.runs.get(run_id)
    assert run is not None and run.done.is_set()
    sup.close()
    time.sleep(0.2)
    assert not marker.exists()
