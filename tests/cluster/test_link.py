"""Redis loss: the link goes down, calls refuse fast, and it recovers (docs/cluster.md#what-each-failure-does)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from multiplex.cluster import ClusterUnavailable, _link, _signals
from tests.cluster.conftest import NodeFactory


def test_a_lost_redis_marks_the_link_down_until_it_answers_again(
    node: NodeFactory, redis_server: Any
) -> None:
    a = node("a")
    changes: list[bool] = []
    a.link.on_change(changes.append)

    async def scenario() -> None:
        assert await a.link.ping() and a.up
        redis_server.stop()
        try:
            assert not await a.link.ping()
            assert not a.up
            with pytest.raises(ClusterUnavailable) as info:
                a.runs.put({"run_id": "r", "profile": "p", "status": "queued"})
            assert "redis" in str(info.value)
            with pytest.raises(ClusterUnavailable):
                await a.approvals.list_open()
        finally:
            redis_server.start()
        assert await a.link.ping() and a.up
        await a.approvals.list_open()

    asyncio.run(scenario())
    assert changes == [False, True]


def test_subscriptions_come_back_after_a_redis_restart(
    node: NodeFactory, redis_server: Any
) -> None:
    a, b = node("a"), node("b")
    got: list[str] = []
    resubscribed = asyncio.Event

    async def scenario() -> None:
        back, arrived = resubscribed(), asyncio.Event()

        async def on_reload(message: dict[str, Any]) -> None:
            got.append(str(message["profile"]))
            arrived.set()

        async def on_back() -> None:
            back.set()

        b.signals.on("reload", on_reload)
        task = asyncio.create_task(b.signals.run(on_back))
        assert await b.signals.wait_subscribed(5)
        redis_server.stop()
        await asyncio.sleep(0.3)
        redis_server.start()
        async with asyncio.timeout(20):
            await back.wait()
        await a.signals.apublish("reload", {"profile": "alpha"})
        async with asyncio.timeout(10):
            await arrived.wait()
        task.cancel()

    asyncio.run(scenario())
    assert got == ["alpha"]


def test_a_stop_never_waits_on_a_loop_that_will_not_end(node: NodeFactory) -> None:
    """A stop once hung for good on a close that never finished (redis/redis-py#3941)."""
    a = node("a")

    async def scenario() -> None:
        release = asyncio.Event()

        async def stubborn() -> None:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                await release.wait()  # stands for a close that does not return

        a._tasks.append(asyncio.get_running_loop().create_task(stubborn(), name="stubborn"))
        await asyncio.wait_for(a.stop(), 10)  # returns: the stubborn loop is left behind
        assert not a._tasks
        release.set()

    asyncio.run(scenario())


def test_a_node_started_while_redis_was_down_resynchronises_when_it_comes(
    node: NodeFactory, redis_server: Any
) -> None:
    # The first heartbeat (in start) is what found Redis away: its return must
    # still be noticed as a recovery, or what the node did meanwhile is never written.
    a = node("a")
    redis_server.stop()

    async def scenario() -> None:
        recovered = asyncio.Event()

        async def on_recovered() -> None:
            recovered.set()

        async def on_lost(_lost: Any) -> None:
            pass

        try:
            await a.start(on_event=lambda _e: None, on_lost=on_lost, on_recovered=on_recovered)
            assert not a.up
        finally:
            redis_server.start()
        try:
            async with asyncio.timeout(10):
                await recovered.wait()
            assert a.up
        finally:
            await a.stop()

    asyncio.run(scenario())


def test_a_signal_its_handler_cannot_take_ends_no_listening(node: NodeFactory) -> None:
    # Anyone who can publish on Redis can send any JSON object: a handler that
    # fails on one is logged, and every later signal still arrives.
    a, b = node("a"), node("b")
    got: list[str] = []

    async def scenario() -> None:
        arrived = asyncio.Event()

        def picky(message: dict[str, Any]) -> None:
            got.append(message["profile"])  # KeyError on a message without one

        async def on_reload(message: dict[str, Any]) -> None:
            got.append(f"reload {message['profile']}")
            arrived.set()

        b.signals.on_now("sessions", picky)
        b.signals.on("reload", on_reload)
        task = asyncio.create_task(b.signals.run())
        assert await b.signals.wait_subscribed(5)
        await a.signals.apublish("sessions", {"no": "profile"})
        await a.signals.apublish("sessions", {"profile": "alpha"})
        await a.signals.apublish("reload", {"profile": "beta"})
        async with asyncio.timeout(10):
            await arrived.wait()
        task.cancel()

    asyncio.run(scenario())
    assert got == ["alpha", "reload beta"]


def test_a_subscription_that_stops_answering_is_made_again(
    node: NodeFactory, redis_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No error, no close: Redis just stops answering this connection (CLIENT
    # PAUSE stands for a firewall that drops an idle flow). Unnoticed, every
    # later signal would be lost; pinged, it is subscribed again.
    monkeypatch.setattr(_signals, "QUIET_SECONDS", 0.3)
    monkeypatch.setattr(_signals, "ANSWER_SECONDS", 0.5)
    b = node("b")

    async def scenario() -> None:
        back = asyncio.Event()
        lost_seen = False

        async def on_back() -> None:
            back.set()

        task = asyncio.create_task(b.signals.run(on_back))
        assert await b.signals.wait_subscribed(5)
        redis_server.client().execute_command("CLIENT", "PAUSE", "2500", "ALL")
        async with asyncio.timeout(20):
            while not back.is_set():
                lost_seen = lost_seen or b.signals.epoch() is None
                await asyncio.sleep(0.05)
        task.cancel()
        assert lost_seen  # what it vouched for was void meanwhile (EmptyProfiles)

    asyncio.run(scenario())


def test_a_redis_that_lost_its_data_is_an_outage_although_no_call_failed(
    node: NodeFactory, redis_server: Any
) -> None:
    # Killed and started again between two pings, or flushed: redis-py reconnects
    # to the new, empty Redis without a word, so only the epoch tells (the node
    # must then write back what it holds).
    a, b = node("a"), node("b")

    async def scenario() -> None:
        assert await a.link.ping() and await b.link.ping()
        assert await a.link.ping()
        assert (a.link.outages, b.link.outages) == (0, 0)  # the same Redis: nothing to do
        redis_server.stop()
        redis_server.start()
        while not await a.link.ping():  # its pooled connection may see the kill first
            pass
        assert a.link.outages == 1 and a.up
        redis_server.flush()
        while not await b.link.ping():
            pass
        assert b.link.outages == 1 and b.up  # one count for both losses between its pings
        assert await a.link.ping()  # a flush: no call fails, the epoch alone tells
        assert a.link.outages == 2 and a.up
        assert await a.link.ping() and await b.link.ping()
        assert (a.link.outages, b.link.outages) == (2, 1)
        await a.link.aclose()
        await b.link.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("how", ["SIGSTOP", "CLIENT PAUSE WRITE"])
def test_a_paused_redis_fails_the_ping_within_its_own_deadline(
    node: NodeFactory, redis_server: Any, how: str
) -> None:
    # The connection stays open and nothing answers (SIGSTOP), or Redis holds
    # every write (the ping is one). The ping's own deadline, not the 3 s socket
    # timeout (times redis-py's retries), says so.
    a = node("a")
    admin = redis_server.client()

    def pause() -> None:
        if how == "SIGSTOP":
            os.kill(redis_server.proc.pid, signal.SIGSTOP)
        else:
            admin.execute_command("CLIENT", "PAUSE", 60_000, "WRITE")

    def resume() -> None:
        if how == "SIGSTOP":
            os.kill(redis_server.proc.pid, signal.SIGCONT)
        else:
            admin.execute_command("CLIENT", "UNPAUSE")

    async def scenario() -> None:
        assert await a.link.ping()
        pause()
        try:
            ping = asyncio.ensure_future(a.link.ping())
            done, _ = await asyncio.wait([ping], timeout=_link.PING_SECONDS * 2.5)
            assert ping in done and not ping.result() and not a.up
        finally:
            resume()
        assert await a.link.ping() and a.up
        await a.link.aclose()

    asyncio.run(scenario())


def test_a_stop_lost_inside_redis_py_still_ends_the_subscription(
    node: NodeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in a test run: the subscription's task asked twice to stop (cancelling() == 2)
    # still reading every second, redis-py's timed read having taken the
    # CancelledError as its own timeout. Here that loss is made to happen: the first
    # cancellation that reaches a read is answered "no message".
    from redis.asyncio.client import PubSub

    read = PubSub.get_message
    lost: list[bool] = []

    async def losing(self: PubSub, *args: Any, **kwargs: Any) -> Any:
        try:
            return await read(self, *args, **kwargs)
        except asyncio.CancelledError:
            if lost:
                raise
            lost.append(True)
            return None

    monkeypatch.setattr(PubSub, "get_message", losing)
    a = node("a")

    async def scenario() -> None:
        task = asyncio.create_task(a.signals.run())
        assert await a.signals.wait_subscribed(5)
        await asyncio.sleep(0.05)  # in its read
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=5)
        assert lost and done == {task} and task.cancelled()

    asyncio.run(scenario())
