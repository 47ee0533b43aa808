"""The supervisor's egress proxy: one event loop thread serving every profile's listener.

docs/execution.md#egress: a sandboxed command's network namespace has one way
out, a listening socket the supervisor made there and hands to
:meth:`EgressProxy.serve` with that profile's :class:`EgressPolicy`. Each
connection is SOCKS5 if its first byte is 0x05, HTTP/1.1 otherwise. The
socket is served as it is (it may live in another network namespace, so it is
never bound again); from ``serve`` on the proxy owns it and ``stop`` closes it.

A listener may serve one command after another (the hub keeps a profile's idle
ones): ``lease`` binds it to the next command's policy, refusal sink and tag,
``release`` ends that binding at once (a connection accepted from then on is
closed unread), closes the connections still queued, and has the proxy's
thread close those the ended command left open. Only then is the listener
offered back, so nothing of one command is ever served under the binding of
the next: each connection keeps the lease it was accepted under.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from multiplex.execution.egress._exchange import EgressLimits, Exchange, Refusal
from multiplex.execution.egress._http import serve_http
from multiplex.execution.egress._policy import EgressPolicy
from multiplex.execution.egress._socks import serve_socks
from multiplex.execution.egress._stream import Stream

__all__ = ["EgressListener", "EgressProxy"]

log = logging.getLogger("multiplex.egress")
_T = TypeVar("_T")
_CALL_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class _Lease:
    """Whom a listener serves now: the policy, where refusals go, the tag they carry."""

    policy: EgressPolicy
    on_refused: Callable[[Refusal], None]
    tag: object


class EgressListener:
    """The handle :meth:`EgressProxy.serve` returns; pass it to :meth:`EgressProxy.stop`."""

    def __init__(
        self,
        lease: _Lease,
        limits: EgressLimits,
        on_connect: Callable[[str, int], None] | None,
    ) -> None:
        self.limits = limits
        self.address: tuple[Any, ...] = ()
        # Replaced whole (one store, read once per connection): None between leases.
        self._lease: _Lease | None = lease
        self._on_connect = on_connect
        self._sock: socket.socket | None = None
        self._server: asyncio.Server | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._open: dict[Exchange, asyncio.Task[None]] = {}
        self._stopped = False

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else f"{len(self._open)} open"
        return f"<EgressListener {self.address!r} tag={self.tag!r} {state}>"

    @property
    def tag(self) -> object:
        """The tag of the command served now (None between leases)."""
        lease = self._lease
        return None if lease is None else lease.tag

    @property
    def open_connections(self) -> int:
        return len(self._open)

    async def _start(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        self.address = sock.getsockname()
        self._sock = sock
        self._server = await loop.create_server(
            lambda: Stream(loop, on_made=self._accepted), sock=sock, backlog=1024
        )
        self._sweeper = loop.create_task(self._sweep())

    def _accepted(self, client: Stream) -> None:
        lease = self._lease
        if lease is None or self._stopped or len(self._open) >= self.limits.max_connections:
            client.abort()  # between leases, or over the cap: closed at once, nothing read
            return
        exchange = Exchange(
            client, lease.policy, self.limits, lease.on_refused, self._on_connect, lease.tag
        )
        task = client.loop.create_task(self._run(exchange))
        self._open[exchange] = task

    def _drain(self) -> None:
        """Close the connections queued and not yet accepted (from any thread: an accept is atomic)."""
        sock = self._sock
        while sock is not None and not self._stopped:
            try:  # non-blocking since the loop took it; its own accept may race this one
                waiting, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                break
            except ConnectionAbortedError:
                continue  # reset while queued: the next one
            except OSError:
                break  # the socket is gone (the listener is being stopped)
            waiting.close()

    async def _run(self, exchange: Exchange) -> None:
        try:
            first = await exchange.client.peek()
            if first == 0x05:
                await serve_socks(exchange)
            elif first is not None:
                await serve_http(exchange)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("egress connection failed (listener %r)", exchange.tag)
        finally:
            self._open.pop(exchange, None)
            for side in (exchange.client, exchange.upstream):
                if side is not None:
                    side.close()

    async def _sweep(self) -> None:
        """Close connections idle past ``idle_timeout`` (a tunnel nobody uses any more)."""
        idle = self.limits.idle_timeout
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(max(0.05, min(idle / 4, 30.0)))
            cutoff = loop.time() - idle
            for exchange, task in list(self._open.items()):
                if exchange.last_active < cutoff:
                    exchange.close()
                    task.cancel()

    async def _stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._server is not None:
            self._server.close()
        await self._close_open()

    async def _close_open(self) -> None:
        tasks = list(self._open.values())
        for exchange, task in list(self._open.items()):
            exchange.close()
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)


class EgressProxy:
    """Serves any number of listeners on one asyncio loop in one daemon thread.

    The thread starts with the first :meth:`serve`; :meth:`close` stops every
    listener and the thread. Every method is thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._listeners: set[EgressListener] = set()

    def serve(
        self,
        sock: socket.socket,
        policy: EgressPolicy,
        *,
        on_refused: Callable[[Refusal], None],
        on_connect: Callable[[str, int], None] | None = None,
        tag: object = None,
        limits: EgressLimits | None = None,
    ) -> EgressListener:
        """Serve the listening TCP socket ``sock`` under ``policy``; returns once accepting.

        ``on_refused`` is called (on the proxy's thread) with each refusal;
        ``on_connect(address, port)`` just before each connection attempt to a
        vetted address. An exception from either is logged, never raised.
        """
        if sock.type != socket.SOCK_STREAM:
            raise ValueError("egress proxy: the socket is not a TCP socket")
        lease = _Lease(policy, on_refused, tag)
        listener = EgressListener(lease, limits or EgressLimits(), on_connect)
        self._call(listener._start(sock))
        with self._lock:
            self._listeners.add(listener)
        return listener

    @staticmethod
    def lease(
        listener: EgressListener,
        policy: EgressPolicy,
        *,
        on_refused: Callable[[Refusal], None],
        tag: object = None,
    ) -> None:
        """Bind a released ``listener`` to the next command; no hop to the proxy's thread."""
        listener._lease = _Lease(policy, on_refused, tag)

    def release(self, listener: EgressListener, keep: Callable[[EgressListener], bool]) -> None:
        """End ``listener``'s lease now; ``keep(listener)`` once what it left is closed.

        From this call on a connection accepted on it is closed unread, and
        those still queued are closed here. Connections the ended command left
        open are closed on the proxy's thread (this call does not wait for it).
        Then ``keep`` is asked whether to offer it again (True: it stays
        served, unleased) or to stop it.
        """
        listener._lease = None
        listener._drain()
        if listener._stopped:
            return
        if not listener._open:  # nothing of the command left to close: offered from here
            if not keep(listener):
                self.stop(listener)
            return
        with self._lock:
            loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the proxy stopped it
                asyncio.run_coroutine_threadsafe(self._returned(listener, keep), loop)

    async def _returned(
        self, listener: EgressListener, keep: Callable[[EgressListener], bool]
    ) -> None:
        listener._drain()
        await listener._close_open()
        if listener._stopped or listener._lease is not None:
            return  # stopped meanwhile, or (a caller's error) leased again before offered
        kept = False
        try:
            kept = keep(listener)
        except Exception:
            log.exception("egress: offering a listener again failed")
        if not kept:
            with self._lock:
                self._listeners.discard(listener)
            await listener._stop()

    def stop(self, listener: EgressListener) -> None:
        """Stop accepting on ``listener``'s socket (closing it) and close its connections."""
        with self._lock:
            self._listeners.discard(listener)
            loop = self._loop
        if loop is not None and not listener._stopped:
            self._call(listener._stop())

    def close(self) -> None:
        """Stop every listener and the loop thread; the proxy may be served again later."""
        with self._lock:
            listeners, self._listeners = list(self._listeners), set()
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        for listener in listeners:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(listener._stop(), loop).result(_CALL_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CALL_TIMEOUT)

    def __enter__(self) -> EgressProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        loop = self._running_loop()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coro.close()
            raise RuntimeError("egress proxy: called from its own event loop thread")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(_CALL_TIMEOUT)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()
                thread = threading.Thread(
                    target=_run_loop, args=(loop, started), name="egress-proxy", daemon=True
                )
                thread.start()
                started.wait()
                self._loop, self._thread = loop, thread
            return self._loop


def _run_loop(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)
    try:
        loop.run_forever()
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.sleep(0))
        loop.close()
