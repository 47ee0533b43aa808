"""The connection of one node to the shared Redis (docs/cluster.md#what-each-failure-does).

One :class:`RedisLink` per node holds an asyncio client (the event loop: HTTP
handlers, listeners, heartbeats) and a sync client (worker threads: the gate,
run records), both on a few seconds' timeout so that a silent Redis is noticed
instead of hanging a request (a stopped one refuses connections at once). ``up`` is what ``/readyz`` reports; any
failed call marks the link down, and so does a health ping unanswered within
:data:`PING_SECONDS` (a paused Redis: a socket timeout and redis-py's retries
would take far longer); only a successful ping brings it back.

Each ping also reads the *epoch*, a random marker the first node to find it
missing writes (``SET NX GET``): a Redis that lost its data (restarted without
persistence, flushed) has another epoch, and that counts as an outage although
no call failed (redis-py reconnects a pooled connection to a restarted Redis
without a word), so the node writes back what it holds (docs/cluster.md).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis

from multiplex._errors import ConfigError
from multiplex.supervision import ClusterConfig

__all__ = [
    "CLOSE_SECONDS",
    "PING_SECONDS",
    "PREFIX",
    "ClusterUnavailable",
    "RedisLink",
    "end_if_cancelled",
    "within",
]

PREFIX = "multiplex:"
log = logging.getLogger("multiplex.cluster")
T = TypeVar("T")
# A dead Redis refuses at once; the timeout only bounds a silent network (and a
# loaded machine must not look like a lost Redis).
_TIMEOUT = 3.0
# How long a stopping node waits for a close: redis-py's asyncio close awaits the
# stream's wait_closed(), which can hang (redis/redis-py#3941); the process is
# leaving, and the kernel closes its sockets.
CLOSE_SECONDS = 1.0
# A loopback or LAN Redis answers a ping in well under a millisecond; one that
# has not answered in this long is paused, frozen or cut off: the node is not
# ready from then on (docs/cluster.md#what-each-failure-does).
PING_SECONDS = 1.0


async def within(awaitable: Awaitable[Any], seconds: float = CLOSE_SECONDS) -> bool:
    """Await ``awaitable`` for at most ``seconds``; False if it timed out or failed."""
    try:
        async with asyncio.timeout(seconds):
            await awaitable
    except (TimeoutError, redis.RedisError, OSError):
        return False
    return True


def end_if_cancelled() -> None:
    """Raise CancelledError if this task was asked to stop and is still running.

    A cancellation that arrives while redis-py reads with a timeout can be lost below
    us: seen in a test, a node's stop that never ended, the subscription's task
    ``cancelling() == 2`` and still reading every second. The task's own count of
    requests is kept, so each of a node's loops calls this after its Redis calls
    and ends on it.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class ClusterUnavailable(RuntimeError):
    """Redis cannot be reached: the node refuses what needs shared state."""


class RedisLink:
    """Both clients of one node, its key names, and whether Redis answers."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self.node_id = config.node_id
        common: dict[str, Any] = {
            "socket_timeout": _TIMEOUT,
            "socket_connect_timeout": _TIMEOUT,
            "decode_responses": True,
            "health_check_interval": 0,
        }
        self.sync: redis.Redis = redis.Redis.from_url(config.redis_url, **common)
        self.aio: aioredis.Redis = aioredis.Redis.from_url(config.redis_url, **common)
        self._lock = threading.Lock()
        self._up = True
        self.outages = 0  # how many times the link went down (read by the health loop)
        self._epoch: str | None = None  # the Redis this node last saw (see the module docstring)
        self._listeners: list[Callable[[bool], None]] = []
        self._trips = 0  # read by the metrics and bench/cluster.py

    def check_credentials(self) -> None:
        """Raise ``ConfigError`` when Redis refuses this node's credentials or its commands.

        One PING on the sync client. A Redis that does not answer is no error
        here: the node starts and is not ready until it does (docs/cluster.md).
        """
        try:
            self.sync.ping()
        except (redis.AuthenticationError, redis.exceptions.NoPermissionError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            password = self.sync.connection_pool.connection_kwargs.get("password")
            if password:  # Redis never repeats it; this message never does either
                reason = reason.replace(str(password), "***")
            raise ConfigError(
                f"{self.config.safe_url}: Redis refused this node ({reason});"
                " check the user and password (docs/cluster.md#authentication)",
                key="cluster.redis_url",
            ) from None
        except (redis.RedisError, OSError):
            pass

    # -- key names ---------------------------------------------------------------
    @staticmethod
    def key(*parts: str) -> str:
        return PREFIX + ":".join(parts)

    # -- health ------------------------------------------------------------------
    @property
    def up(self) -> bool:
        return self._up

    def on_change(self, listener: Callable[[bool], None]) -> None:
        """``listener(up)`` whenever the link goes down or comes back."""
        self._listeners.append(listener)

    def _set(self, up: bool) -> None:
        with self._lock:
            changed, self._up = self._up != up, up
            if changed and not up:
                self.outages += 1
        if changed:
            for listener in list(self._listeners):
                listener(up)

    def mark_down(self, cause: BaseException | None = None) -> None:
        if self._up and cause is not None:  # said once per outage, with what failed
            log.warning("redis unavailable: %s: %s", type(cause).__name__, cause)
        self._set(False)

    def mark_up(self) -> None:
        self._set(True)

    @property
    def round_trips(self) -> int:
        """Round trips to Redis so far (a command, a script or a pipeline is one)."""
        return self._trips

    def trip(self, count: int = 1) -> None:
        with self._lock:
            self._trips += count

    def call(self, fn: Callable[[], T]) -> T:
        """Run one sync round trip; a Redis error marks the link down and raises ``ClusterUnavailable``."""
        self.trip()
        try:
            return fn()
        except (redis.RedisError, OSError) as exc:
            self.mark_down(exc)
            raise ClusterUnavailable(f"redis: {type(exc).__name__}") from None

    async def acall(self, coro: Any) -> Any:
        """Await one async round trip with the same failure rule as :meth:`call`."""
        self.trip()
        try:
            return await coro
        except (redis.RedisError, OSError) as exc:
            self.mark_down(exc)
            raise ClusterUnavailable(f"redis: {type(exc).__name__}") from None

    async def ping(self) -> bool:
        """True if Redis answers within :data:`PING_SECONDS`; sets :attr:`up` accordingly.

        A Redis found with another epoch than the last ping's (it lost its data)
        counts as one outage in :attr:`outages`, which the health loop recovers from.
        """
        mine = secrets.token_hex(8)
        try:
            async with asyncio.timeout(PING_SECONDS):
                seen = await self.aio.set(self.key("epoch"), mine, nx=True, get=True)
        except TimeoutError:
            self.mark_down(TimeoutError(f"no answer to a ping within {PING_SECONDS:g} s"))
            return False
        except (redis.RedisError, OSError) as exc:
            self.mark_down(exc)
            return False
        epoch = mine if seen is None else str(seen)
        if self._epoch is not None and epoch != self._epoch and self._up:
            # (A failed call already counted this outage when the link is down.)
            log.warning("redis lost its data (restarted empty or flushed)")
            with self._lock:
                self.outages += 1
        self._epoch = epoch
        if not self._up:
            # Back after an outage: the idle pooled connections still point at the
            # Redis that went away, and the first call on each would fail ("closed
            # by server") and mark the link down again behind a ready /readyz.
            self.sync.connection_pool.disconnect(inuse_connections=False)
            await self.aio.connection_pool.disconnect(inuse_connections=False)
        self.mark_up()
        return True

    async def aclose(self) -> None:
        """Close both clients; never waits more than :data:`CLOSE_SECONDS` on the async one."""
        await within(self.aio.aclose())
        self.sync.close()
