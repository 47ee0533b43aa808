"""docs/execution.md#egress over the gateway: an egress.refused event, a counter, the gateway's own port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution import bwrap_status
from multiplex.gateway import GatewayServer
from tests.conftest import write_home
from tests.gateway.conftest import Api, SseReader

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")

ADMIN = "admin-token-for-egress-0123456789"
TOKEN = "egress-token-for-tests-eeee5555"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[GatewayServer, Api]]:
    write_home(
        tmp_path / "profiles",
        "e",
        # Loopback allowed: only the protection of the gateway's own port stands.
        "terminal:\n  sandbox: bwrap\n  egress: {allow: ['127.0.0.1']}\napprovals:\n  mode: 'off'\n",
        f"MULTIPLEX_TOKEN={TOKEN}\n",
    )
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\n")
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    sup.start()
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=5.0).start()
    try:
        yield server, Api(server.url.rstrip("/"), TOKEN)
    finally:
        server.stop()
        sup.close()


def test_the_gateways_own_port_is_refused_with_an_event_and_a_count(
    served: tuple[GatewayServer, Api],
) -> None:
    server, api = served
    # The pause lets the stream below connect first: the event is sent live.
    command = f"sleep 1; curl -sS -m 5 http://127.0.0.1:{server.port}/v1/whoami"
    run_id = api.submit([command], session_id="s")
    with api.client() as c, c.stream("GET", f"/v1/runs/{run_id}/events") as response:
        events = SseReader(response)
        refused = events.until(lambda name, _d: name == "egress.refused")[1]
        done = events.until(lambda name, _d: name == "command.finished")[1]
    assert f"refused 127.0.0.1:{server.port}" in refused["message"]
    assert "protected" in refused["message"] and refused["run_id"] == run_id
    assert (
        "admin" not in done["stdout"]
        and f"multiplex egress: refused 127.0.0.1:{server.port}" in done["stderr"]
    )
    assert done["egress_refused"] == [refused["message"]]
    assert api.run(run_id)["results"][0]["egress_refused"] == [refused["message"]]
    metrics = Api(api.base, ADMIN).get("/metrics").text
    assert 'multiplex_egress_refused_total{profile="e"} 1.0' in metrics
