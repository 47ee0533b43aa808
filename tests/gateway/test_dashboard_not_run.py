"""An approved command that could not start is no green "approved" on the dashboard (issue 31 item 4).

The ops example's ssh host does not resolve: the run fails, and the decision row
in a real headless Chromium says "approved, did not run" with ssh's own reason.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from multiplex import Supervisor
from tests.conftest import HomeFactory
from tests.gateway.test_dashboard import (  # noqa: F401  (fixtures)
    ADMIN_TOKEN,
    Gateway,
    browser,
    expect,
    page,
    sign_in,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

OPS = """\
terminal:
  backend: ssh
  host: ops.invalid
  user: deploy
  known_hosts: known_hosts
command_allowlist: ["systemctl restart *"]
"""


@pytest.fixture
def ops(make_home: HomeFactory, supervisor_of: Callable[..., Supervisor]) -> Iterator[Gateway]:
    uvicorn = pytest.importorskip("uvicorn")
    from multiplex.gateway import create_app

    homes = {"ops": make_home("ops", OPS, files={"known_hosts": ""})}
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: null\nwatch: {mode: off}\n")
    app = create_app(sup, admin_token=ADMIN_TOKEN)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), "uvicorn to start", 15)
    try:
        yield Gateway(f"http://127.0.0.1:{port}", sup, homes)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def test_a_command_that_did_not_run_is_shown_so(ops: Gateway, page: Any) -> None:  # noqa: F811
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with httpx.Client(base_url=ops.url, headers=headers, timeout=30) as http:
        body = {"profile": "ops", "session_id": "s1", "commands": ["systemctl restart nginx"]}
        run_id = http.post("/v1/runs", json=body).json()["run_id"]
        deadline = time.monotonic() + 60
        while (run := http.get(f"/v1/runs/{run_id}").json())["status"] not in (
            "failed",
            "completed",
        ):
            assert time.monotonic() < deadline, run
            time.sleep(0.05)
    assert run["status"] == "failed" and "ops.invalid" in run["results"][0]["error"]
    sign_in(page, ops, ADMIN_TOKEN)
    row = page.get_by_test_id("decision-row").first
    expect(row.get_by_test_id("decision-outcome")).to_have_text("approved, did not run")
    expect(row.get_by_test_id("decision-not-run")).to_contain_text("ops.invalid")
    assert not page.errors
