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

from multiplex.cluster._link import RedisLink, within

__all__ = ["CANCEL_CHANNEL", "RELOAD_CHANNEL", "Handler", "Signals"]

log = logging.getLogger("multiplex.cluster")
RELOAD_CHANNEL = "reload"
CANCEL_CHANNEL = "cancel"
Handler = Callable[[dict[str, Any]], Awaitable[None]]


class Signals:
    """One node's subscriptions; handlers run on the node's event loop, in arrival order."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._handlers: dict[str, Handler] = {}
        self._ready = asyncio.Event()

    def channel(self, name: str) -> str:
        return self._link.key(name)

    def on(self, name: str, handler: Handler) -> None:
        """Call ``handler(message)`` for each JSON message on channel ``name`` (before :meth:`run`)."""
        self._handlers[self.channel(name)] = handler

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
        """Listen until cancelled; after a lost connection, subscribe again and call ``on_resubscribed``."""
        first = True
        while True:
            pubsub = self._link.aio.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(*self._handlers)
                self._ready.set()
                if not first and on_resubscribed is not None:
                    await on_resubscribed()
                first = False
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is None or message.get("type") != "message":
                        continue
                    handler = self._handlers.get(str(message["channel"]))
                    if handler is None:
                        continue
                    try:
                        await handler(dict(json.loads(message["data"])))
                    except Exception:
                        log.exception("cluster signal handler failed")
            except (redis.RedisError, OSError):
                self._ready.clear()
                # This connection died; whether Redis did is the ping's to say. A
                # subscription left over from before a Redis restart fails after
                # the health check has already seen Redis back: marking the link
                # down here would refuse runs on a node that /readyz calls ready.
                await self._link.ping()
                await asyncio.sleep(0.2)
            finally:
                # Never wait on the stream's close (redis/redis-py#3941): a stop hung here.
                connection = pubsub.connection
                if connection is not None:
                    with contextlib.suppress(Exception):
                        await within(connection.disconnect(nowait=True))
                with contextlib.suppress(Exception):
                    await within(pubsub.aclose())  # type: ignore[no-untyped-call]
