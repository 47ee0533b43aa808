"""Session grants and yolo read from Redis at every decision (docs/cluster.md#sessions)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from multiplex.cluster import ClusterUnavailable
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


async def _listening(*nodes: Any) -> list[asyncio.Task[None]]:
    tasks = [asyncio.create_task(n.signals.run()) for n in nodes]
    for n in nodes:
        assert await n.signals.wait_subscribed(5)
    return tasks


async def _until(check: Any, seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while not await asyncio.to_thread(check):
            await asyncio.sleep(0.005)


def test_a_profile_known_empty_is_read_again_once_any_node_grants(node: NodeFactory) -> None:
    a, b = node("a"), node("b")
    on_a, on_b = a.session_table("alpha"), b.session_table("alpha")

    async def scenario() -> None:
        tasks = await _listening(a, b)
        assert (await asyncio.to_thread(on_b.get, "s1")).grants.texts() == ()
        trips = b.link.round_trips
        for session in ("s1", "s2", "s3"):  # known empty: no session of alpha has state
            assert (await asyncio.to_thread(on_b.get, session)).grants.texts() == ()
        assert b.link.round_trips == trips
        # beta is not alpha: it is read
        assert (await asyncio.to_thread(b.session_table("beta").get, "s1")).grants.texts() == ()
        assert b.link.round_trips == trips + 1
        await asyncio.to_thread(on_a.grant, "s2", ["git push"])
        await _until(lambda: on_b.get("s2").grants.texts() == ("git push",))
        assert (await asyncio.to_thread(on_b.get, "s1")).grants.texts() == ()
        trips = b.link.round_trips
        await asyncio.to_thread(on_b.get, "s1")  # alpha holds state now: every get reads
        assert b.link.round_trips == trips + 1
        await asyncio.to_thread(on_a.set_yolo, "s3", True)  # and yolo switched on is seen too
        await _until(lambda: on_b.get("s3").yolo)
        for task in tasks:
            task.cancel()

    asyncio.run(scenario())


def test_yolo_switched_on_elsewhere_is_seen_by_a_node_that_knew_the_profile_empty(
    node: NodeFactory,
) -> None:
    a, b = node("a"), node("b")

    async def scenario() -> None:
        tasks = await _listening(a, b)
        on_b = b.session_table("alpha")
        assert not (await asyncio.to_thread(on_b.get, "s1")).yolo
        assert b.empty_profiles.empty("alpha")
        await asyncio.to_thread(a.session_table("alpha").set_yolo, "s1", True)
        await _until(lambda: on_b.get("s1").yolo)
        for task in tasks:
            task.cancel()

    asyncio.run(scenario())


def test_nothing_is_known_empty_without_a_live_subscription(
    node: NodeFactory, redis_server: Any
) -> None:
    a = node("a")
    table = a.session_table("alpha")
    for _ in range(3):  # no subscription: a grant elsewhere would go unseen, so always read
        table.get("s1")
    assert not a.empty_profiles.empty("alpha")

    async def scenario() -> None:
        tasks = await _listening(a)
        await asyncio.to_thread(table.get, "s1")
        assert a.empty_profiles.empty("alpha")
        epoch = a.signals.epoch()
        # The subscription is cut: what it vouched for is forgotten, and a grant
        # written meanwhile (its message lost with the connection) is read.
        redis_server.client().client_kill_filter(_type="pubsub")
        async with asyncio.timeout(10):
            while a.signals.epoch() == epoch:
                await asyncio.sleep(0.005)
        assert not a.empty_profiles.empty("alpha")
        redis_server.client().hset("multiplex:sess:alpha:s1", "grants", '["make *"]')
        assert (await asyncio.to_thread(table.get, "s1")).grants.texts() == ("make *",)
        for task in tasks:
            task.cancel()

    asyncio.run(scenario())


def test_a_read_overtaken_by_a_change_is_not_remembered_and_reset_lets_it_be_known_again(
    node: NodeFactory,
) -> None:
    a = node("a")
    empty = a.empty_profiles

    async def scenario() -> None:
        tasks = await _listening(a)
        ticket = empty.ticket()
        empty.forget("alpha")  # a grant's message arrived while the read was on its way
        empty.found_empty("alpha", ticket)
        assert not empty.empty("alpha")
        table = a.session_table("alpha")
        await asyncio.to_thread(table.grant, "s1", ["git push"])
        await asyncio.to_thread(table.get, "s2")
        assert not empty.empty("alpha")  # s1 holds a grant
        assert await asyncio.to_thread(table.reset, "s1")
        await asyncio.to_thread(table.get, "s2")
        assert empty.empty("alpha")
        for task in tasks:
            task.cancel()

    asyncio.run(scenario())


def test_the_profiles_set_of_sessions_outlives_every_session_written_since(
    node: NodeFactory, redis_server: Any
) -> None:
    # A session whose TTL a later write renewed must stay in the set, or a
    # node would take the profile for empty and ignore the session's grants.
    table = node("a", run_ttl=3).session_table("alpha")
    client = redis_server.client()
    session, with_state = "multiplex:sess:alpha:s1", "multiplex:sessions:alpha"
    table.grant("s1", ["git push"])
    for renew in (lambda: table.set_yolo("s1", False), lambda: table.set_yolo("s1", True)):
        time.sleep(1.1)
        renew()
        assert client.pttl(with_state) >= client.pttl(session) > 0
    assert client.smembers(with_state) == {"s1"}


def test_a_grant_revoked_on_one_node_is_gone_on_every_node(
    node: NodeFactory, redis_server: Any
) -> None:
    on_a, on_b = node("a").session_table("alpha"), node("b").session_table("alpha")
    on_a.grant("s1", ["git push", "make *", "npm test"])
    assert on_b.revoke("s1", "make *") is True
    assert on_a.get("s1").grants.texts() == ("git push", "npm test")
    assert not on_a.get("s1").grants.matches(["make", "test"])
    assert on_a.revoke("s1", "make *") is False  # already gone
    assert on_a.revoke("s9", "git push") is False  # a session that holds nothing
    assert on_b.revoke("s1", "git push") and on_b.revoke("s1", "npm test")
    assert on_a.get("s1").grants.texts() == ()
    on_a.grant("s1", ["git push"])
    redis_server.stop()
    try:  # a revocation nobody can store must never look done
        with pytest.raises(ClusterUnavailable):
            on_a.revoke("s1", "git push")
    finally:
        redis_server.start()
