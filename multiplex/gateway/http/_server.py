"""Serving the gateway with uvicorn: binding, signals and the graceful stop (docs/gateway.md).

SIGTERM or SIGINT: stop accepting connections, withdraw every pending approval
("supervisor shutting down"), end the event streams, let running commands
finish for up to ``grace`` seconds, then return so the caller closes the
supervisor. A second SIGINT forces the exit.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import signal
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Generator
from types import FrameType

import uvicorn

from multiplex._errors import ConfigError
from multiplex.execution.egress import default_hub
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.http._app import create_app
from multiplex.gateway.http._connections import ConnectionGuard, ConnectionMetrics
from multiplex.gateway.http._direct import DirectAnswers, DirectHttp
from multiplex.gateway.http._logs import install_json_logging
from multiplex.supervision import Supervisor

__all__ = ["GatewayServer", "bind", "is_loopback", "serve"]

log = logging.getLogger("multiplex.gateway")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ``ConfigError`` (one line) when that fails."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot resolve {host!r}: {exc.strerror}", key="gateway.host") from None
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", key="gateway.port"
        ) from None
    sock.set_inheritable(True)
    return sock


def protect_endpoints(sup: Supervisor, host: str, port: int) -> None:
    """docs/execution.md#egress: no profile's egress reaches this gateway or the cluster's Redis."""
    hub = default_hub()
    hub.protect_host(host, port)
    cluster = sup.config.cluster
    if cluster is not None:
        url = urllib.parse.urlsplit(cluster.redis_url)
        if url.hostname is not None:
            with contextlib.suppress(ValueError):
                hub.protect_host(url.hostname, url.port or 6379)


def is_loopback(sock: socket.socket) -> bool:
    """Whether the socket only accepts connections from this machine."""
    try:
        return ipaddress.ip_address(sock.getsockname()[0]).is_loopback
    except ValueError:
        return False


class _Uvicorn(uvicorn.Server):
    """uvicorn, with our own signal handling: begin the drain, never re-raise the signal."""

    def __init__(
        self, config: uvicorn.Config, on_exit: Callable[[], None], on_hup: Callable[[], object]
    ) -> None:
        super().__init__(config)
        self._on_exit = on_exit
        self._on_hup = on_hup

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        original[signal.SIGHUP] = signal.signal(signal.SIGHUP, self.handle_hup)
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def handle_hup(self, sig: int, frame: FrameType | None) -> None:
        # SIGHUP reloads (docs/operations.md#live-reconfiguration); never ends the process.
        threading.Thread(target=self._on_hup, name="multiplex-sighup", daemon=True).start()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
            return
        self.should_exit = True
        # Not in the handler itself: the interrupted code may hold a lock it needs.
        threading.Thread(target=self._on_exit, name="multiplex-shutdown", daemon=True).start()


class GatewayServer:
    """The gateway app served by uvicorn on a socket bound at construction.

    ``run()`` serves in the calling thread (signals handled in the main thread);
    ``start()``/``stop()`` serve in a background thread (tests, benches).
    """

    def __init__(
        self,
        sup: Supervisor,
        *,
        admin_token: str,
        host: str = "127.0.0.1",
        port: int = 8765,
        grace: float = 10.0,
        max_workers: int = 256,
    ) -> None:
        self.app = create_app(sup, admin_token=admin_token, grace=grace, max_workers=max_workers)
        self.gateway: Gateway = self.app.state.gateway
        self.socket = bind(host, port)
        self.host = host
        self.port: int = self.socket.getsockname()[1]
        protect_endpoints(sup, host, self.port)
        # docs/operations.md#connections-and-streams: the caps and the head deadline
        # hold in the protocol, before uvicorn parses a byte.
        self.connections = ConnectionGuard(lambda: sup.config.gateway)
        if sup.metrics.registry is not None:
            with contextlib.suppress(ValueError):  # a second server of one supervisor
                sup.metrics.registry.register(
                    ConnectionMetrics(self.connections, self.gateway.listeners.__len__)
                )
        # Each response in one write; POST /v1/approvals/test answered in the protocol.
        self.protocol = DirectHttp.answering(
            self.connections,
            DirectAnswers(self.gateway, lambda: sup.config.gateway.max_request_bytes),
        )
        config = uvicorn.Config(
            self.app,
            log_config=None,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=max(1, int(grace)),
            ws="none",
            http=self.protocol,
        )
        self._server = _Uvicorn(
            config, self.gateway.begin_shutdown, lambda: self.gateway.reload_config("SIGHUP")
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}/"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.socket)

    def run(self) -> None:
        """Serve until SIGTERM/SIGINT (or :meth:`stop`), then drain; returns afterwards."""
        self._server.run(sockets=[self.socket])

    def start(self, timeout: float = 10.0) -> GatewayServer:
        """Serve in a background thread; return once requests are accepted."""
        self._thread = threading.Thread(target=self.run, name="multiplex-gateway", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """The same graceful stop as SIGTERM, from any thread; waits for it."""
        self.gateway.begin_shutdown()
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)


def serve(
    sup: Supervisor,
    *,
    admin_token: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    grace: float = 10.0,
    announce: Callable[[GatewayServer], None] | None = None,
) -> None:
    """``multiplex up``: JSON logs, watch the homes, serve until a signal, close the supervisor."""
    remove_logging = install_json_logging(sup.gate.recorder.redact)
    try:
        server = GatewayServer(sup, admin_token=admin_token, host=host, port=port, grace=grace)
        if not server.loopback:
            log.warning(
                "listening on %s, which is not a loopback address: anyone who can reach it "
                "may try tokens; put TLS and a firewall in front (docs/operations.md)",
                host,
            )
        sup.start()
        if announce is not None:
            announce(server)
        server.run()
    finally:
        sup.close()
        remove_logging()
