"""One client connection's way out: decide, resolve, vet, connect (docs/execution.md#egress).

The HTTP and SOCKS5 front ends parse what the client asked for and call
:meth:`Exchange.open`; everything that makes the answer safe happens here, in
one place: the name is checked, resolved by the proxy itself, each address is
vetted, and only vetted addresses are connected to, in order.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

from multiplex.execution.egress._policy import (
    EgressPolicy,
    EgressVerdict,
    RefusalReason,
    is_ip_literal,
    normalize_host,
)
from multiplex.execution.egress._stream import Stream

__all__ = ["ConnectFailed", "EgressLimits", "Exchange", "Refusal", "Refused"]

log = logging.getLogger("multiplex.egress")


@dataclass(frozen=True, slots=True)
class EgressLimits:
    """Bounds on one listener: a request head's size and time, idleness, concurrency."""

    head_bytes: int = 16 * 1024
    head_timeout: float = 10.0
    idle_timeout: float = 300.0
    max_connections: int = 256
    connect_timeout: float = 30.0


@dataclass(frozen=True, slots=True)
class Refusal:
    """A destination the policy refused, as passed to ``on_refused``."""

    host: str
    port: int
    reason: RefusalReason
    message: str  # "refused x.example:443 (not in egress.allow)"
    tag: object


class Refused(Exception):
    """The policy refused the destination (already reported to ``on_refused``)."""

    def __init__(self, verdict: EgressVerdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


class ConnectFailed(Exception):
    """An allowed destination could not be reached; ``kind`` says how."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "unresolved" | "refused" | "unreachable" | "timeout"


class Exchange:
    """One accepted client connection and, once opened, its upstream connection."""

    def __init__(
        self,
        client: Stream,
        policy: EgressPolicy,
        limits: EgressLimits,
        on_refused: Callable[[Refusal], None],
        on_connect: Callable[[str, int], None] | None,
        tag: object,
    ) -> None:
        self.client = client
        self.upstream: Stream | None = None
        self.upstream_for: tuple[str, int] | None = None  # what a kept-alive upstream reaches
        self.policy = policy
        self.limits = limits
        self.tag = tag
        self._on_refused = on_refused
        self._on_connect = on_connect

    @property
    def last_active(self) -> float:
        up = self.upstream.last_active if self.upstream is not None else 0.0
        return max(self.client.last_active, up)

    def close(self) -> None:
        for side in (self.client, self.upstream):
            if side is not None:
                side.abort()

    async def open(self, host: str, port: int) -> Stream:
        """A connection to ``host:port`` through a vetted address; Refused or ConnectFailed."""
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = self.upstream_for = None
        refused = self.policy.check_name(host, port)
        if refused is not None:
            raise self._refuse(refused)
        loop = self.client.loop
        name = normalize_host(host) or host
        if is_ip_literal(name):
            addresses = [name]  # nothing to resolve; spares a thread hop per request
        else:
            try:
                async with asyncio.timeout(self.limits.connect_timeout):
                    infos = await loop.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError, TimeoutError) as exc:
                raise ConnectFailed("unresolved", f"cannot resolve {host}: {exc}") from None
            addresses = [str(info[4][0]) for info in infos]
        verdict = self.policy.decide(host, port, addresses)
        if not verdict.allowed:
            raise self._refuse(verdict)
        failure = ConnectFailed("unreachable", f"cannot connect to {host}:{port}")
        for address in verdict.addresses:
            self._notify_connect(address, port)
            try:
                async with asyncio.timeout(self.limits.connect_timeout):
                    # A numeric host: asyncio connects to it without resolving again.
                    _, stream = await loop.create_connection(
                        lambda: Stream(loop), host=address, port=port
                    )
            except TimeoutError:
                failure = ConnectFailed("timeout", f"timed out connecting to {host}:{port}")
            except OSError as exc:
                kind = "refused" if exc.errno == errno.ECONNREFUSED else "unreachable"
                failure = ConnectFailed(kind, f"cannot connect to {host}:{port}: {exc.strerror}")
            else:
                self.upstream, self.upstream_for = stream, (host, port)
                return stream
        raise failure

    def _refuse(self, verdict: EgressVerdict) -> Refused:
        assert verdict.reason is not None
        refusal = Refusal(verdict.host, verdict.port, verdict.reason, verdict.message, self.tag)
        try:
            self._on_refused(refusal)
        except Exception:
            log.exception("egress on_refused callback failed for %s", verdict.message)
        return Refused(verdict)

    def _notify_connect(self, address: str, port: int) -> None:
        if self._on_connect is None:
            return
        try:
            self._on_connect(address, port)
        except Exception:
            log.exception("egress on_connect callback failed for %s:%s", address, port)
