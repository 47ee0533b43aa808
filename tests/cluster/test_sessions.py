"""Session grants and yolo read from Redis at every decision (docs/cluster.md#sessions)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cluster.conftest import NodeFactory


def test_a_grant_on_one_node_holds_on_another_and_reset_clears_it(node: NodeFactory) -> None:
    on_a, on_b = node("a").session_table("alpha"), node("b").session_table("alpha")
    on_a.grant("s1", ["git push", "make *"])
    on_a.grant("s1", ["git push"])  # no duplicate
    assert on_b.get("s1").grants.texts() == ("git push", "make *")
    assert on_b.get("s1").grants.matches(["make", "test"])
    assert not on_b.get("s2").grants.matches(["git", "push"])  # another session
    assert node("c").session_table("beta").get("s1").grants.texts() == ()  # another profile
    on_b.set_yolo("s1", True)
    assert on_a.get("s1").yolo
    assert set(on_a.sessions()) == {"s1"}
    assert on_b.reset("s1") is True
    assert on_a.get("s1").grants.texts() == () and not on_a.get("s1").yolo
    assert on_a.reset("s1") is False


def test_a_reset_is_broadcast(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    got: list[dict[str, Any]] = []

    async def scenario() -> None:
        done = asyncio.Event()

        async def on_reset(message: dict[str, Any]) -> None:
            got.append(message)
            done.set()

        b.signals.on("reset", on_reset)
        task = asyncio.create_task(b.signals.run())
        assert await b.signals.wait_subscribed(5)
        assert a.session_table("alpha").broadcast_reset("s9") == 1
        async with asyncio.timeout(10):
            await done.wait()
        task.cancel()

    asyncio.run(scenario())
    assert got == [{"profile": "alpha", "session": "s9", "cause": "session reset", "node": "a"}]


def test_without_redis_no_grant_is_honoured(node: NodeFactory, redis_server: Any) -> None:
    table = node("a").session_table("alpha")
    table.grant("s1", ["git push"])
    table.set_yolo("s1", True)
    redis_server.stop()
    try:
        state = table.get("s1")  # fails closed: the gate asks
        assert state.grants.texts() == () and not state.yolo
        table.grant("s1", ["rm *"])  # not remembered, not raised
    finally:
        redis_server.start()
    assert table.get("s1").grants.texts() == ()  # a restarted Redis lost it: still no grant
