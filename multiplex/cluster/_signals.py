"""Pub/sub between nodes: resolutions, session resets, reload signals, run cancels (docs/cluster.md).

Signals carry no state of their own: a reload signal tells every node to
re-read a profile's files (the files stay the source of truth, so a node that
missed a signal still converges on its watcher or its next signal); a
resolution names a prompt whose winner is stored in Redis. :class:`Signals`
subscribes once per node and calls the handler registered for each channel;
when Redis goes away it keeps trying and subscribes again when it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import redis

from multiplex.cluster._link import RedisLink, end_if_cancelled, within

__all__ = ["CANCEL_CHANNEL", "RELOAD_CHANNEL", "Handler", "Signals"]

log = logging.getLogger("multiplex.cluster")
RELOAD_CHANNEL = "reload"
CANCEL_CHANNEL = "cancel"
Handler = Callable[[dict[str, Any]], Awaitable[None]]
QUIET_SECONDS = 5.0  # a subscription silent this long is pinged...
ANSWER_SECONDS = 3.0  # ...and subscribed again when the pong does not come in this long
_Queue = asyncio.Queue[tuple[Callable[..., Awaitable[None]], tuple[Any, ...]]]


class Signals:
    """One node's subscriptions; handlers run on the node's event loop, in arrival order."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._handlers: dict[str, Handler] = {}
        self._now: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._ready = asyncio.Event()
        self._epoch = 0  # changes whenever the subscription is made or lost

    def epoch(self) -> int | None:
        """The live subscription's number (any thread), None while there is none.

        Whatever a node remembers on the strength of "a change would have been
        signalled" is valid only under the same number (see ``EmptyProfiles``).
        """
        return self._epoch if self._ready.is_set() else None

    def _lost(self) -> None:
        self._ready.clear()
        self._epoch += 1

    def channel(self, name: str) -> str:
        return self._link.key(name)

    def on(self, name: str, handler: Handler) -> None:
        """Call ``handler(message)`` for each JSON message on channel ``name`` (before :meth:`run`)."""
        self._handlers[self.channel(name)] = handler

    def on_now(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        """Like :meth:`on`, for a quick sync handler applied as the message is read."""
        self._now[self.channel(name)] = handler

    def publish(self, name: str, message: dict[str, Any]) -> int:
        """Sync publish (any thread); how many nodes' subscriptions received it."""
        payload = json.dumps({**message, "node": self._link.node_id}, separators=(",", ":"))
        return int(self._link.call(lambda: self._link.sync.publish(self.channel(name), payload)))

    async def apublish(self, name: str, message: dict[str, Any]) -> int:
        payload = json.dumps({**message, "node": self._link.node_id}, separators=(",", ":"))
        return int(await self._link.acall(self._link.aio.publish(self.channel(name), payload)))

    async def wait_subscribed(self, timeout: float) -> bool:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        return self._ready.is_set()

    async def run(self, on_resubscribed: Callable[[], Awaitable[None]] | None = None) -> None:
        """Listen until cancelled; after a lost connection, subscribe again and call ``on_resubscribed``.

        The handlers run one at a time, in arrival order, in a task of their own:
        a slow one (a reload) never holds back the reading, so an :meth:`on_now`
        handler is applied as soon as its message is read.
        """
        queue: _Queue = asyncio.Queue()
        dispatcher = asyncio.get_running_loop().create_task(self._dispatch(queue))
        try:
            await self._listen(queue, on_resubscribed)
        finally:
            dispatcher.cancel()

    async def _dispatch(self, queue: _Queue) -> None:
        while True:
            handler, args = await queue.get()
            try:
                await handler(*args)
            except Exception:
                log.exception("cluster signal handler failed")

    async def _listen(
        self,
        queue: _Queue,
        on_resubscribed: Callable[[], Awaitable[None]] | None,
    ) -> None:
        first = True
        loop = asyncio.get_running_loop()
        while True:
            pubsub = self._link.aio.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self._handlers, *self._now)
                self._epoch += 1
                self._ready.set()
                if not first and on_resubscribed is not None:
                    queue.put_nowait((on_resubscribed, ()))  # before what arrives from now on
                first = False
                heard, pinged = loop.time(), False  # the last thing this subscription brought
                while True:
                    message = await pubsub.get_message(timeout=min(1.0, QUIET_SECONDS))
                    end_if_cancelled()
                    at = loop.time()
                    if message is not None:
                        heard, pinged = at, False
                    elif pinged and at - heard > QUIET_SECONDS + ANSWER_SECONDS:
                        # A connection that died without a word (a firewall dropping
                        # idle flows): every signal would be lost without this.
                        raise redis.ConnectionError("subscription: no answer to a ping")
                    elif not pinged and at - heard > QUIET_SECONDS:
                        await pubsub.ping()
                        pinged = True
                    if message is None or message.get("type") != "message":
                        continue
                    channel = str(message["channel"])
                    try:
                        data = dict(json.loads(message["data"]))
                    except (ValueError, TypeError):
                        log.warning("cluster signal on %s is not a JSON object: ignored", channel)
                        continue
                    now = self._now.get(channel)
                    if now is not None:
                        try:  # a message that trips it must not end the listening
                            now(data)
                        except Exception:
                            log.exception("cluster signal handler on %s failed", channel)
                    elif (handler := self._handlers.get(channel)) is not None:
                        queue.put_nowait((handler, (data,)))
            except (redis.RedisError, OSError):
                self._lost()
                # This connection died; whether Redis did is the ping's to say. A
                # subscription left over from before a Redis restart fails after
                # the health check has already seen Redis back: marking the link
                # down here would refuse runs on a node that /readyz calls ready.
                await self._link.ping()
                end_if_cancelled()
                await asyncio.sleep(0.2)
            finally:
                self._lost()  # also when cancelled
                # Never wait on the stream's close (redis/redis-py#3941): a stop hung here.
                connection = pubsub.connection
                if connection is not None:
                    with contextlib.suppress(Exception):
                        await within(connection.disconnect(nowait=True))
                with contextlib.suppress(Exception):
                    await within(pubsub.aclose())  # type: ignore[no-untyped-call,unused-ignore]
