"""Schemathesis fuzzes every operation of the gateway's OpenAPI schema: no 5xx, ever.

Against a live uvicorn server on a loopback port, with the admin token, over
profile homes that allowlist nothing (``mode: strict``): a fuzzed command can
only park (and time out after one second) or be blocked, never run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from tests.conftest import write_home

ADMIN = "schemathesis-admin-token-000"
LOCKED = """\
terminal:
  cwd: .
  timeout: 5
command_allowlist: []
approvals:
  mode: strict
  timeout: 1
  unattended: deny
"""


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayServer]:
    root: Path = tmp_path_factory.mktemp("fuzz")
    for name in ("one", "two"):
        write_home(
            root / "profiles", name, LOCKED, f"MULTIPLEX_TOKEN={name}-token-fuzz-0123456789\n"
        )
    write_home(root / "profiles", "bad", "approvals: [1, 2]\n")
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: one\n")
    sup = Supervisor.from_config(root / "multiplex.yaml")
    sup.start()
    server = GatewayServer(sup, admin_token=ADMIN, port=0, grace=2.0).start()
    try:
        yield server
    finally:
        server.stop()
        sup.close()


@pytest.mark.slow
def test_no_operation_answers_5xx(live: GatewayServer) -> None:
    schema = schemathesis.openapi.from_url(f"{live.url}openapi.json")
    auth = {"Authorization": f"Bearer {ADMIN}"}
    tested: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.endswith("/events"):
            continue  # endless SSE streams; covered by test_api.py

        @settings(
            max_examples=30,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def fuzz(case: Any) -> None:
            case.call_and_validate(
                headers=auth,
                checks=[not_a_server_error, response_schema_conformance],
                timeout=10,
            )

        fuzz()
        tested.append(f"{operation.method.upper()} {operation.path}")
    assert "POST /v1/runs" in tested and "POST /v1/runs/{run_id}/approval" in tested
    assert len(tested) >= 12


def test_the_schema_documents_every_api_path(live: GatewayServer) -> None:
    import httpx

    paths = set(httpx.get(f"{live.url}openapi.json").json()["paths"])
    assert {
        "/v1/runs",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/approval",
        "/v1/runs/{run_id}/cancel",
        "/v1/runs/{run_id}/events",
        "/v1/approvals",
        "/v1/approvals/test",
        "/v1/sessions/{profile}/{session}/reset",
        "/v1/profiles",
        "/v1/profiles/{name}",
        "/v1/decisions",
        "/v1/policy/diff",
        "/v1/whoami",
        "/v1/events",
        "/metrics",
        "/healthz",
        "/readyz",
    } <= paths
