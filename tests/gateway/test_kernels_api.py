"""docs/kernels.md#over-http: code cells in runs, GET /v1/kernels, DELETE of a session; real uvicorn, real kernels."""

from __future__ import annotations

import time
from typing import Any

from multiplex.execution.kernels._proctree import alive
from tests.gateway.conftest import Api, Gateway


def _code_run(api: Api, code: list[str], **body: Any) -> str:
    r = api.post("/v1/runs", json={"code": code, **body})
    assert r.status_code == 202, r.text
    run_id = r.json()["run_id"]
    assert isinstance(run_id, str)
    return run_id


def test_a_run_of_code_cells_keeps_state_and_lists_its_kernel(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    run_id = _code_run(alpha, ["x = 40", "x + 2", "print('hi')\n1/0", "'never'"], session_id="k1")
    data = alpha.wait(run_id, timeout=120)
    assert data["kind"] == "code" and data["status"] == "failed"
    first, second, third = data["results"]
    assert first["outcome"] == "ok" and first["fresh_kernel"] and first["result"] is None
    assert second["result"] == "42" and not second["fresh_kernel"]
    assert third["outcome"] == "error" and third["stdout"] == "hi\n"
    assert third["error"]["ename"] == "ZeroDivisionError"  # the run stops at it
    again = alpha.wait(_code_run(alpha, ["x"], session_id="k1"), timeout=60)
    assert again["status"] == "completed" and again["results"][0]["result"] == "40"

    (row,) = alpha.get("/v1/kernels").json()
    assert row["profile"] == "alpha" and row["session"] == "k1" and row["chain"] == []
    assert isinstance(row["pid"], int) and alive(row["pid"]) and row["memory_bytes"] > 0
    assert row["started"] <= row["last_used"]
    assert gateway.profile["beta"].get("/v1/kernels").json() == []  # a token sees only its own
    assert [r["kernel_id"] for r in gateway.admin.get("/v1/kernels").json()] == [row["kernel_id"]]
    assert gateway.anonymous.get("/v1/kernels").status_code == 401

    # DELETE of the session ends its kernel; another profile's token cannot.
    assert gateway.profile["beta"].request("DELETE", "/v1/sessions/alpha/k1").status_code == 404
    assert alpha.request("DELETE", "/v1/sessions/alpha/k1").status_code == 200
    assert not alive(row["pid"]) and alpha.get("/v1/kernels").json() == []


def test_reset_gives_the_first_cell_a_fresh_kernel(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    first = alpha.wait(_code_run(alpha, ["x = 40"], session_id="kr"), timeout=120)
    assert first["status"] == "completed"
    kept = alpha.wait(_code_run(alpha, ["x"], session_id="kr"), timeout=60)
    assert kept["results"][0]["result"] == "40" and not kept["results"][0]["fresh_kernel"]
    fresh = alpha.wait(_code_run(alpha, ["x", "'never'"], session_id="kr", reset=True), timeout=120)
    (cell,) = fresh["results"]  # the state is gone: x is not defined, and the run stops
    assert cell["fresh_kernel"] and cell["outcome"] == "error"
    assert cell["error"]["ename"] == "NameError" and fresh["status"] == "failed"


def test_a_run_carries_commands_or_code_never_both(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    both = alpha.post("/v1/runs", json={"commands": ["true"], "code": ["1"]})
    neither = alpha.post("/v1/runs", json={"session_id": "s"})
    empty = alpha.post("/v1/runs", json={"code": []})
    for r in (both, neither, empty):
        assert r.status_code == 422, r.text
    assert "commands or code" in both.text


def test_a_cells_shell_request_asks_through_its_run(gateway: Gateway) -> None:
    alpha = gateway.profile["alpha"]
    run_id = _code_run(
        alpha,
        [
            "from multiplex.kernel import run\nr = run('rm -rf ./never-there')\n(r.outcome, r.exit_code)"
        ],
        session_id="ask",
    )
    parked = alpha.wait(run_id, "waiting_for_approval", timeout=120)
    pending = parked["pending_approval"]
    assert pending["command"] == "rm -rf ./never-there"
    assert alpha.answer(run_id, pending["approval_id"], "deny").status_code == 200
    done = alpha.wait(run_id, timeout=60)
    assert done["status"] == "completed"
    assert done["results"][0]["result"] == "('denied', None)"


def test_cancelling_a_code_run_kills_its_kernel(gateway: Gateway) -> None:
    beta = gateway.profile["beta"]
    run_id = _code_run(beta, ["1"], session_id="cancel")
    beta.wait(run_id, timeout=120)
    (row,) = beta.get("/v1/kernels").json()
    pid = row["pid"]  # the host pid (in a sandbox the kernel sees its own pid space)
    run_id = _code_run(beta, ["import time\ntime.sleep(600)"], session_id="cancel")
    beta.wait(run_id, "running", timeout=60)
    deadline = time.monotonic() + 60
    while not [r for r in beta.get("/v1/kernels").json() if r["busy"]]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    cancelled = beta.post(f"/v1/runs/{run_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["cancelled"] == 1
    done = beta.wait(run_id, timeout=60)
    assert done["status"] == "cancelled" and done["results"][0]["outcome"] == "cancelled"
    assert not alive(pid)
