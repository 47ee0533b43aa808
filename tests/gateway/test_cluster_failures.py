"""A node killed with SIGKILL, and Redis stopped and restarted, under real nodes (docs/cluster.md#what-each-failure-does)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from multiplex.cluster import Cluster
from multiplex.supervision import ClusterConfig
from tests.gateway.cluster_nodes import SECRET, Node, make_cluster_homes
from tests.gateway.conftest import ADMIN, Api, SseReader

pytestmark = pytest.mark.slow


@pytest.fixture
def pair(redis_url: str, tmp_path: Path) -> Iterator[tuple[Node, Node]]:
    make_cluster_homes(tmp_path)
    nodes: list[Node] = []
    try:
        nodes.append(Node(tmp_path, "a", redis_url, node_timeout=2.0))
        nodes.append(Node(tmp_path, "b", redis_url, node_timeout=2.0))
        yield nodes[0], nodes[1]
    finally:
        for node in nodes:
            node.stop()


def _until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "did not happen in time"
        time.sleep(0.05)


def _status(api: Api, run_id: str) -> str:
    return str(api.run(run_id)["status"])


def test_kill_9_fails_its_runs_and_cancels_its_prompts_as_node_lost(
    pair: tuple[Node, Node],
) -> None:
    a, b = pair
    delta_a = Api(a.base, ADMIN)
    parked = a.admin.submit(["echo parked-on-a"], profile="alpha", session_id="s-lost")
    running = delta_a.submit(["sleep 30"], profile="delta")
    kept = b.admin.submit(["echo parked-on-b"], profile="alpha", session_id="s-kept")
    a.admin.wait(parked, "waiting_for_approval")
    _until(lambda: _status(b.admin, running) == "running" or _status(a.admin, running) == "running")
    b.admin.wait(kept, "waiting_for_approval")
    ap_a = b.admin.run(parked)["pending_approval"]["approval_id"]
    with (
        httpx.Client(base_url=b.base, headers={"Authorization": f"Bearer {ADMIN}"}) as cl,
        cl.stream("GET", "/v1/events", timeout=60) as response,
    ):
        stream = SseReader(response).connected()
        a.kill9()
        _, cancelled = stream.until(
            lambda n, d: n == "approval.cancelled" and d["approval_id"] == ap_a
        )
        assert cancelled["cause"] == "node lost"
        _, finished = stream.until(
            lambda n, d: n == "run.finished" and d["run_id"] in (parked, running)
        )
    for run_id in (parked, running):
        _until(lambda run_id=run_id: _status(b.admin, run_id) == "failed")
        doc = b.admin.run(run_id)
        assert doc["error"] == "node lost" and doc["pending_approval"] is None
    open_ids = [r["approval_id"] for r in b.admin.get("/v1/approvals").json()]
    assert ap_a not in open_ids
    late = b.admin.answer(parked, ap_a, "once")
    assert late.status_code == 409
    # Nothing else is lost: B's own prompt is still open and answerable.
    ap_b = b.admin.run(kept)["pending_approval"]["approval_id"]
    assert ap_b in open_ids
    assert b.admin.answer(kept, ap_b, "once").status_code == 200
    assert b.admin.wait(kept)["status"] == "completed"
    assert finished["error"] == "node lost"


def test_redis_lost_means_not_ready_and_503_then_recovery(
    pair: tuple[Node, Node], redis_server: Any
) -> None:
    a, b = pair
    running = a.admin.submit(["sleep 2"], profile="delta")
    _until(lambda: _status(a.admin, running) == "running")
    redis_server.stop()
    try:
        _until(lambda: a.admin.get("/readyz").status_code == 503)
        ready = a.admin.get("/readyz").json()
        assert ready["cluster"] == {"node_id": "a", "redis": False}
        refused = a.admin.post("/v1/runs", json={"profile": "delta", "commands": ["sleep 0"]})
        assert refused.status_code == 503 and "redis" in refused.json()["detail"]
        assert b.admin.get("/v1/approvals").status_code == 503  # never a stale list
        # The running command is kept: it finishes on its node.
        done = a.admin.wait(running, timeout=30)
        assert done["status"] == "completed" and done["results"][0]["exit_code"] == 0
    finally:
        redis_server.start()
    _until(lambda: a.ready() and b.ready())
    # The run that finished while Redis was away is written back on recovery: the
    # other node sees how it ended, not a 404 (a restarted Redis starts empty here).
    _until(lambda: b.admin.get(f"/v1/runs/{running}").status_code == 200)
    seen = b.admin.run(running)
    assert seen["status"] == "completed" and seen["results"][0]["exit_code"] == 0
    again = a.admin.submit(["echo back"], profile="alpha", session_id="s-back")
    pending = b.admin.wait(again, "waiting_for_approval")["pending_approval"]
    assert b.admin.answer(again, pending["approval_id"], "once").status_code == 200
    assert a.admin.wait(again)["status"] == "completed"


def test_a_parked_run_moves_to_another_node_on_a_graceful_stop(
    pair: tuple[Node, Node],
) -> None:
    """docs/cluster.md#node-loss: a rolling restart does not drop a run waiting for a human."""
    a, b = pair
    run_id, first = a.admin.parked(["echo first", "echo handed-over"], profile="alpha")
    assert a.admin.answer(run_id, first["approval_id"], "once").status_code == 200
    parked = a.admin.wait(run_id, "waiting_for_approval")["pending_approval"]
    assert parked["command"] == "echo handed-over"
    # A command line holding a secret stays where it is: cancelled, never queued in the clear.
    secret_run, _ = a.admin.parked([f"echo {SECRET}"], profile="alpha", session_id="s-secret")
    a.stop()  # SIGTERM: a graceful stop
    seen = b.admin.wait(run_id, "waiting_for_approval", timeout=30)
    again = seen["pending_approval"]
    assert again["approval_id"] != parked["approval_id"]  # asked again, on b
    assert again["command"] == "echo handed-over"
    # docs/approvals.md#what-a-prompt-shows: b's prompt still names who asked.
    assert parked["asked_by"] == again["asked_by"] == seen["asked_by"] == "the admin token"
    assert [r["stdout"] for r in seen["results"]] == ["first\n"]  # what ran on a is kept
    assert b.admin.answer(run_id, again["approval_id"], "once").status_code == 200
    done = b.admin.wait(run_id, timeout=30)
    assert done["status"] == "completed"
    assert [r["stdout"] for r in done["results"]] == ["first\n", "handed-over\n"]
    dropped = b.admin.wait(secret_run, timeout=30)
    assert dropped["status"] == "cancelled", dropped
    (refused,) = dropped["results"]
    assert refused["decision"]["outcome"] == "cancelled", refused
    assert (
        refused["decision"]["cause"] == "supervisor shutting down" and refused["exit_code"] is None
    )


def test_a_handed_over_run_survives_the_death_of_the_node_that_took_it(
    redis_url: str, tmp_path: Path
) -> None:
    """docs/cluster.md#node-loss: taking a run off the queue is not yet owning it."""
    make_cluster_homes(tmp_path)
    a = Node(tmp_path, "a", redis_url, node_timeout=2.0)
    nodes = [a]
    try:
        run_id, first = a.admin.parked(["echo first", "echo handed-over"], profile="alpha")
        assert a.admin.answer(run_id, first["approval_id"], "once").status_code == 200
        a.admin.wait(run_id, "waiting_for_approval")
        a.stop()  # alone: the run waits on the queue
        # A node takes it and dies before carrying it on.
        ghost = Cluster(ClusterConfig(redis_url=redis_url, node_id="ghost", node_timeout=2.0))

        async def take_and_die() -> str | None:
            await ghost.nodes.beat()
            item = await ghost.handoff.take()
            return None if item is None else item.run_id

        assert asyncio.run(take_and_die()) == run_id
        b = Node(tmp_path, "b", redis_url, node_timeout=2.0)
        nodes.append(b)
        seen = b.admin.wait(run_id, "waiting_for_approval", timeout=30)
        again = seen["pending_approval"]
        assert again["command"] == "echo handed-over"
        assert [r["stdout"] for r in seen["results"]] == ["first\n"]
        assert b.admin.answer(run_id, again["approval_id"], "once").status_code == 200
        done = b.admin.wait(run_id, timeout=30)
        assert done["status"] == "completed", done
        assert [r["stdout"] for r in done["results"]] == ["first\n", "handed-over\n"]
        assert any("ghost lost" in line and "1 requeued" in line for line in b.lines), b.lines
    finally:
        for node in nodes:
            node.stop()


def _served_while(node: Node, request: Callable[[], httpx.Response]) -> httpx.Response:
    """``request()`` in a thread; meanwhile the node answers /healthz within a second each time."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        began = time.monotonic()
        pending = pool.submit(request)
        time.sleep(0.3)
        served = []
        while not pending.done():
            asked = time.monotonic()
            assert node.admin.get("/healthz").status_code == 200
            served.append(time.monotonic() - asked)
            time.sleep(0.1)
        answer = pending.result()
    assert time.monotonic() - began > 2  # the request really waited on Redis
    assert served and max(served) < 1.0, served
    return answer


def test_a_silent_redis_holds_back_no_other_request_and_admits_no_run(
    pair: tuple[Node, Node], redis_server: Any
) -> None:
    # SIGSTOP: connections stay open and nothing answers (a network that drops
    # packets). The new run's write waits for its timeout; the node meanwhile
    # serves every other request, then refuses the run rather than admit one
    # Redis never recorded.
    a, b = pair
    assert redis_server.proc is not None
    pid = redis_server.proc.pid
    client = redis_server.client()
    os.kill(pid, signal.SIGSTOP)
    try:
        refused = _served_while(
            a, lambda: a.admin.post("/v1/runs", json={"profile": "delta", "commands": ["sleep 0"]})
        )
        assert refused.status_code == 503 and "redis" in refused.json()["detail"]
        _until(lambda: a.admin.get("/readyz").status_code == 503)
    finally:
        os.kill(pid, signal.SIGCONT)
    _until(lambda: a.ready() and b.ready())
    # The refused run's write was on its way when the request gave up: Redis may
    # still have taken it. Its record then ends 'failed', never a 'queued' forever.
    _until(lambda: all(doc["status"] == "failed" for doc in _run_docs(client)))
    for doc in _run_docs(client):
        assert doc["error"] == "cluster: redis unavailable"
    again = a.admin.submit(["sleep 0"], profile="delta")
    assert b.admin.wait(again)["status"] == "completed"


def _run_docs(client: Any) -> list[dict[str, Any]]:
    """Every run document in Redis."""
    return [json.loads(client.get(key)) for key in client.scan_iter("multiplex:run:*")]


def test_a_cancel_while_redis_is_silent_holds_back_no_other_request(
    pair: tuple[Node, Node], redis_server: Any
) -> None:
    a, b = pair
    parked = a.admin.submit(["true"], profile="delta")  # strict: it asks
    a.admin.wait(parked, "waiting_for_approval")
    assert redis_server.proc is not None
    pid = redis_server.proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        cancelled = _served_while(a, lambda: a.admin.post(f"/v1/runs/{parked}/cancel"))
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    finally:
        os.kill(pid, signal.SIGCONT)
    _until(lambda: a.ready() and b.ready())
    # Written back on recovery: the other node sees how it ended.
    _until(lambda: _status(b.admin, parked) == "cancelled")


def test_a_redis_that_stood_still_longer_than_a_heartbeat_judges_no_node_lost(
    pair: tuple[Node, Node], redis_server: Any
) -> None:
    # Every heartbeat expires while Redis is stopped (node_timeout 2 s here); on
    # its return the nodes beat again before anyone may judge them by it.
    a, b = pair
    parked = a.admin.submit(["true"], profile="delta")  # strict: it asks
    pending = a.admin.wait(parked, "waiting_for_approval")["pending_approval"]
    assert redis_server.proc is not None
    os.kill(redis_server.proc.pid, signal.SIGSTOP)
    time.sleep(2.5)  # past every heartbeat (1.4 s), short of the 3 s socket timeout
    os.kill(redis_server.proc.pid, signal.SIGCONT)
    _until(lambda: a.ready() and b.ready())
    time.sleep(2.5)  # more than node_timeout: a wrong judgement would have been made
    assert _status(b.admin, parked) == "waiting_for_approval"
    assert b.admin.answer(parked, pending["approval_id"], "once").status_code == 200
    assert b.admin.wait(parked)["status"] == "completed"


def test_a_revocation_made_while_redis_was_away_reaches_a_node_that_does_not_watch(
    redis_url: str, redis_server: Any, tmp_path: Path
) -> None:
    # a sees the hand edit but cannot signal it; b (a shared folder without
    # events, like NFS) learns it from a's signal once Redis is back, or from
    # re-reading every home after its own subscription was lost.
    make_cluster_homes(tmp_path)
    config = tmp_path / "profiles" / "delta" / "config.yaml"
    a = Node(tmp_path, "a", redis_url)
    try:
        b = Node(tmp_path, "b", redis_url, watch="off")
        try:
            assert _verdict(b, "echo ok revoked") == "approved"
            redis_server.stop()
            try:
                config.write_text(config.read_text().replace(', "echo ok *"', ""))
                _until(lambda: any("reload signal for delta not sent" in x for x in a.lines))
            finally:
                redis_server.start()
            _until(lambda: a.ready() and b.ready())
            _until(lambda: _verdict(b, "echo ok revoked") != "approved", timeout=10)
        finally:
            b.stop()
    finally:
        a.stop()


def _verdict(node: Node, command: str) -> str:
    body = {"profile": "delta", "command": command}
    return str(node.admin.post("/v1/approvals/test", json=body).json()["outcome"])


def _open_ids(node: Node) -> list[str]:
    """The open prompts ``GET /v1/approvals?state=open`` lists on ``node`` ([] while it answers 503)."""
    r = node.admin.get("/v1/approvals", params={"state": "open"})
    return [row["approval_id"] for row in r.json()] if r.status_code == 200 else []


@pytest.mark.parametrize("pause", [0.0, 1.0], ids=["at-once", "after-the-nodes-noticed"])
def test_a_prompt_parked_when_redis_restarts_empty_is_written_back_and_answered_anywhere(
    pair: tuple[Node, Node], redis_server: Any, pause: float
) -> None:
    """docs/cluster.md#what-each-failure-does: Redis killed (-9) and started again
    empty on its port, quicker than a health check or after the nodes saw it gone:
    every node writes back its open prompts, those registered before too, so each
    node lists them and an answer on the other node runs the command."""
    a, b = pair
    run_id, pending = a.admin.parked(["echo back-from-empty"], profile="alpha", session_id="s-e")
    ap = pending["approval_id"]
    _until(lambda: _open_ids(b) == [ap])
    redis_server.stop()  # SIGKILL: no persistence, nothing kept
    if pause:
        _until(lambda: not a.ready() and not b.ready())
    redis_server.start()  # the same port, empty
    _until(lambda: _open_ids(a) == [ap] and _open_ids(b) == [ap])
    assert b.admin.run(run_id)["pending_approval"]["approval_id"] == ap
    assert b.admin.answer(run_id, ap, "once").status_code == 200
    done = a.admin.wait(run_id)
    assert done["status"] == "completed", done
    assert done["results"][0]["stdout"].strip() == "back-from-empty"
    _until(lambda: b.admin.run(run_id)["status"] == "completed")
    assert _open_ids(a) == [] and _open_ids(b) == []


def test_an_answer_missed_while_the_subscription_was_down_is_applied_on_its_return(
    pair: tuple[Node, Node], redis_server: Any
) -> None:
    """docs/cluster.md#what-each-failure-does: pub/sub keeps nothing, so an answer stored
    while a node's subscription was down (here: stored without its message, then the
    node's subscription cut) is read back when the node subscribes again."""
    a, _b = pair
    run_id, pending = a.admin.parked(["echo missed-answer"], profile="alpha", session_id="s-m")
    ap = pending["approval_id"]
    client = redis_server.client()
    key = f"multiplex:ap:{ap}"
    _until(lambda: client.hget(key, "state") in (b"open", "open"))
    answer = {"choice": "once", "rule": None, "reason": None, "by": "admin"}
    doc = json.dumps({"answer": answer, "approval_id": ap, "resolved_on": "b"})
    client.hset(key, mapping={"state": "resolved", "resolution": doc})  # no message sent
    client.zrem("multiplex:ap:open", ap)
    time.sleep(0.5)
    assert _status(a.admin, run_id) == "waiting_for_approval"  # nothing told a yet
    client.client_kill_filter(_type="pubsub")  # a's (and b's) subscription cut
    done = a.admin.wait(run_id)
    assert done["status"] == "completed" and done["results"][0]["stdout"] == "missed-answer\n"


def test_a_paused_redis_makes_readyz_503_until_it_answers_again(
    pair: tuple[Node, Node], redis_server: Any
) -> None:
    """A Redis that stops answering (SIGSTOP: connections open, no reply) is seen by
    the health ping's own deadline, well before a socket timeout and redis-py's
    retries: /readyz says 503 while it is paused and 200 once it answers."""
    a, b = pair
    assert a.ready() and b.ready()
    assert redis_server.proc is not None
    pid = redis_server.proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        # Generous bound: a busy machine is slow, the ping's deadline is 1 s.
        _until(lambda: a.admin.get("/readyz").status_code == 503, timeout=8.0)
        _until(lambda: b.admin.get("/readyz").status_code == 503, timeout=8.0)
        assert a.admin.get("/readyz").json()["cluster"] == {"node_id": "a", "redis": False}
    finally:
        os.kill(pid, signal.SIGCONT)
    _until(lambda: a.ready() and b.ready())
    again = a.admin.submit(["sleep 0"], profile="delta")
    assert b.admin.wait(again)["status"] == "completed"
