"""Open approvals across nodes; the first resolution wins atomically (docs/cluster.md#approvals)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

from multiplex.cluster import Announcement, Cluster
from tests.cluster.conftest import NodeFactory


def _row(approval_id: str, created: float, run_id: str = "run-x") -> dict[str, object]:
    return {
        "approval_id": approval_id,
        "run_id": run_id,
        "profile": "alpha",
        "session_id": "s1",
        "command": "git push",
        "created_at": created,
        "expires_at": created + 30,
    }


def test_every_nodes_open_prompts_are_listed_oldest_first(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    now = time.time()
    b.approvals.register(_row("ap-2", now + 1))
    a.approvals.register(_row("ap-1", now))

    async def scenario() -> None:
        rows = await a.approvals.list_open()
        assert [(r["approval_id"], r["node"]) for r in rows] == [("ap-1", "a"), ("ap-2", "b")]
        assert await b.approvals.open_on("a") == ["ap-1"]

    asyncio.run(scenario())


def test_the_first_answer_wins_and_later_ones_see_it(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    a.approvals.register(_row("ap-1", time.time()))

    async def scenario() -> None:
        first = await b.approvals.aresolve("ap-1", {"answer": {"choice": "once", "by": "b"}})
        assert first.won and first.resolution is not None
        late = a.approvals.resolve("ap-1", {"cancelled": "approvals.timeout passed"})
        assert not late.won
        assert late.resolution is not None and late.resolution["answer"]["by"] == "b"
        assert late.resolution["resolved_on"] == "b"
        assert await a.approvals.list_open() == []
        assert await a.approvals.open_on("a") == []
        row = await a.approvals.get("ap-1")
        assert row is not None and row["state"] == "resolved"
        unknown = a.approvals.resolve("ap-never", {"cancelled": "x"})
        assert not unknown.won and unknown.resolution is None

    asyncio.run(scenario())


def test_an_answer_naming_its_run_resolves_only_that_runs_prompt(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    a.approvals.register(_row("ap-1", time.time(), run_id="run-1"))
    answer = {"answer": {"choice": "once", "by": "b"}}

    async def scenario() -> None:
        # Another run's, another profile's, an unknown prompt: nothing changes.
        for run_id, profile, approval_id in (
            ("run-2", "", "ap-1"),
            ("run-1", "beta", "ap-1"),
            ("run-1", "", "ap-never"),
        ):
            missed = await b.approvals.aresolve(approval_id, answer, run_id=run_id, profile=profile)
            assert not missed.matched and not missed.won and missed.resolution is None
        assert [r["approval_id"] for r in await b.approvals.list_open()] == ["ap-1"]
        won = await b.approvals.aresolve("ap-1", answer, run_id="run-1", profile="alpha")
        assert won.matched and won.won
        again = await b.approvals.aresolve("ap-1", answer, run_id="run-1")
        assert again.matched and not again.won
        assert again.resolution is not None and again.resolution["answer"]["by"] == "b"
        assert await a.approvals.list_open() == []

    asyncio.run(scenario())


def test_the_winner_is_published_to_every_node(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    seen: list[dict[str, object]] = []

    async def scenario() -> None:
        got = asyncio.Event()

        async def on_resolved(message: dict[str, object]) -> None:
            seen.append(message)
            got.set()

        a.signals.on("resolved", on_resolved)
        listener = asyncio.create_task(a.signals.run())
        assert await a.signals.wait_subscribed(5)
        a.approvals.register(_row("ap-9", time.time()))
        await b.approvals.aresolve("ap-9", {"answer": {"choice": "deny", "by": "b"}})
        async with asyncio.timeout(10):
            await got.wait()
        listener.cancel()

    asyncio.run(scenario())
    assert seen[0]["approval_id"] == "ap-9" and seen[0]["answer"] == {"choice": "deny", "by": "b"}


_ANSWERER = """
import json, sys, threading
from multiplex.cluster import Announcement, Cluster
from multiplex.supervision import ClusterConfig
url, node, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
cluster = Cluster(ClusterConfig(redis_url=url, node_id=node))
results = {}
barrier = threading.Barrier(10)
def answer(i):
    barrier.wait()
    out = cluster.approvals.resolve("ap-race", {"answer": {"choice": "once", "by": f"{node}-{i}"}})
    results[i] = out.won
threads = [threading.Thread(target=answer, args=(start + i,)) for i in range(10)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(results))
"""


def test_fifty_concurrent_answers_from_five_processes_resolve_once(
    node: NodeFactory, redis_url: str
) -> None:
    a: Cluster = node("a")
    a.approvals.register(_row("ap-race", time.time()))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ANSWERER, redis_url, f"n{i}", str(i * 10)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(5)
    ]
    wins: dict[str, bool] = {}
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        wins.update(json.loads(out))
    assert len(wins) == 50
    winners = [i for i, won in wins.items() if won]
    assert len(winners) == 1
    stored = asyncio.run(a.approvals.get("ap-race"))
    assert stored is not None
    assert stored["resolution"]["answer"]["by"].endswith(f"-{winners[0]}")


def test_registering_again_never_reopens_a_resolved_prompt(node: NodeFactory) -> None:
    a = node("a")
    assert a.approvals.register(_row("ap-1", time.time()))
    assert a.approvals.resolve("ap-1", {"answer": {"choice": "once", "by": "x"}}).won
    assert not a.approvals.register(_row("ap-1", time.time()))

    async def scenario() -> None:
        assert await a.approvals.list_open() == []
        row = await a.approvals.get("ap-1")
        assert row is not None and row["state"] == "resolved"

    asyncio.run(scenario())


def _announced(a: Cluster, approval_id: str, run_id: str) -> None:
    """Claim a prompt on ``a`` with its approval.request and its run's documents."""
    row = _row(approval_id, time.time(), run_id)
    doc = {"run_id": run_id, "profile": "alpha", "status": "waiting_for_approval", "results": []}
    resumed = {**doc, "status": "running", "pending_approval": None}
    head = json.dumps({k: row[k] for k in ("approval_id", "run_id", "profile", "session_id")})
    announcement = Announcement(
        a.publisher.inline("approval.request", row, "alpha", run_id, doc),
        head.encode()[:-1],
        a.publisher.stored(resumed),
    )
    claim = a.approvals.claim(row, ("alpha", "s1", approval_id), announcement)
    assert claim.leader is None and claim.position is not None


def _entries(a: Cluster, run_id: str) -> list[tuple[str, dict[str, str]]]:
    stream = a.link.sync.xrange(a.events.key)
    return [(str(i), f) for i, f in stream if f["run"] == run_id]


def test_a_winning_answer_appends_approval_resolved_and_the_resumed_run(
    node: NodeFactory,
) -> None:
    a, b = node("a"), node("b")
    _announced(a, "ap-ann", "run-ann")
    answer = {"answer": {"choice": "once", "rule": None, "reason": None, "by": "admin"}}

    async def scenario() -> str | None:
        won = await b.approvals.aresolve("ap-ann", answer, run_id="run-ann")
        assert won.won and won.position is not None and won.doc
        late = await b.approvals.aresolve("ap-ann", {"cancelled": "late"})
        assert not late.won and late.position == won.position  # the loser learns it too
        return won.position

    position = asyncio.run(scenario())
    (_, asked), (resolved_at, resolved) = _entries(a, "run-ann")
    assert resolved_at == position
    assert asked["name"] == "approval.request" and resolved["name"] == "approval.resolved"
    assert resolved["node"] == "a"  # the prompt's node, whoever answered
    assert json.loads(resolved["data"]) == {
        "approval_id": "ap-ann",
        "run_id": "run-ann",
        "profile": "alpha",
        "session_id": "s1",
        "choice": "once",
        "by": "admin",
    }
    record = a.runs.get_sync("run-ann")
    assert record is not None
    assert record["status"] == "running" and record["pending_approval"] is None


def test_an_answer_leaves_a_run_document_written_since_and_a_cancellation_appends_nothing(
    node: NodeFactory,
) -> None:
    a, b = node("a"), node("b")
    _announced(a, "ap-moved", "run-moved")
    a.runs.put({"run_id": "run-moved", "profile": "alpha", "status": "waiting_for_approval"})
    _announced(a, "ap-gone", "run-gone")

    async def scenario() -> None:
        answer = {"answer": {"choice": "deny", "rule": None, "reason": None, "by": "admin"}}
        moved = await b.approvals.aresolve("ap-moved", answer)
        assert moved.won and moved.position is not None and not moved.doc
        gone = await b.approvals.aresolve("ap-gone", {"cancelled": "run cancelled"})
        assert gone.won and gone.position is None

    asyncio.run(scenario())
    record = a.runs.get_sync("run-moved")
    assert record is not None and record["status"] == "waiting_for_approval"  # not overwritten
    assert [f["name"] for _, f in _entries(a, "run-gone")] == ["approval.request"]
