"""The process's egress: one proxy, one network namespace per profile (docs/execution.md#egress).

A command of a profile with ``terminal.network: on`` gets an ``EgressSession``:
a listener inside its profile's namespace (started at the profile's first
such command and kept for the process's life), served by the one proxy under
the profile's policy, the proxy variables pointing at it, and the argv that
starts the sandbox in that namespace. Each command has a listener of its own
while it runs, so a refusal is told to the command that asked (on its stderr)
and to nobody else. A listener outlives its command: once the command's
connections are closed it waits, unleased, for the profile's next command
(``_IDLE_MAX`` of them a profile), so a command costs no request to the
namespace's holder and no hop to the proxy's thread to start serving.
Endpoints of the supervisor itself (the gateway's port, the cluster's Redis)
are ``protect``-ed: no profile reaches them unless its ``egress.allow`` names
that very host and port.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from multiplex.execution.egress._exchange import Refusal
from multiplex.execution.egress._netns import ProfileNetwork
from multiplex.execution.egress._policy import EgressPolicy
from multiplex.execution.egress._proxy import EgressListener, EgressProxy

__all__ = ["EgressHub", "EgressSession", "default_hub", "proxy_env"]

_PROXY_NAMES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")
_SOCKS_NAMES = ("all_proxy", "ALL_PROXY")
_NO_PROXY_NAMES = ("no_proxy", "NO_PROXY")


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a command's connections to the proxy at 127.0.0.1:``port``."""
    env = dict.fromkeys(_PROXY_NAMES, f"http://127.0.0.1:{port}")
    env.update(dict.fromkeys(_SOCKS_NAMES, f"socks5h://127.0.0.1:{port}"))
    # Empty: loopback inside the namespace holds nothing but the proxy itself.
    env.update(dict.fromkeys(_NO_PROXY_NAMES, ""))
    return env


# Idle listeners kept per profile: more than this many commands at once of one
# profile make listeners that are stopped when their commands end.
_IDLE_MAX = 16


@dataclass(slots=True)
class EgressSession:
    """One command's way out: its proxy variables, the argv entering its namespace, what was refused."""

    env: dict[str, str]
    enter: list[str]
    _release: Callable[[], None] | None
    refusals: list[Refusal] = field(default_factory=list)

    @property
    def netns_path(self) -> str:
        """The namespace's ``/proc/<holder>/ns/net`` (podman's ``--network ns:``): valid while served."""
        return next(a.split("=", 1)[1] for a in self.enter if a.startswith("--net="))

    def refused_lines(self) -> list[str]:
        """One line per refusal, as put on the command's stderr."""
        return [f"multiplex egress: {r.message}" for r in list(self.refusals)]

    def close(self) -> None:
        """End this command's lease of its listener (idempotent)."""
        release, self._release = self._release, None
        if release is not None:
            release()


class EgressHub:
    """One proxy and the profiles' network namespaces, for the life of the process. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proxy = EgressProxy()
        self._networks: dict[Path, ProfileNetwork] = {}
        # Per namespace, its listeners whose last command has ended (none leased).
        self._idle: dict[ProfileNetwork, list[EgressListener]] = {}
        # Per namespace, how many commands hold a lease in it; those forgotten while some
        # did end with the last lease (a command between its plan and its start needs it).
        self._leased: dict[ProfileNetwork, int] = {}
        self._retiring: set[ProfileNetwork] = set()
        self._protected: frozenset[tuple[str, int]] = frozenset()
        self._policies: dict[tuple[tuple[str, ...], tuple[str, ...]], EgressPolicy] = {}

    def protect(self, endpoints: Iterable[tuple[str, int]]) -> None:
        """Add (address, port) endpoints no profile reaches unless its allow list names them."""
        with self._lock:
            self._protected = self._protected | frozenset(endpoints)
            self._policies.clear()

    def protect_host(self, host: str, port: int) -> None:
        """Protect ``host:port`` under every address it names; a wildcard bind under this host's."""
        names = {host}
        if host in ("", "0.0.0.0", "::"):
            names = {"127.0.0.1", "::1", socket.gethostname()}
        addresses: set[tuple[str, int]] = set()
        for name in names:
            with contextlib.suppress(OSError, UnicodeError):
                for info in socket.getaddrinfo(name, port, type=socket.SOCK_STREAM):
                    addresses.add((str(info[4][0]), port))
        addresses.add((host, port))
        self.protect(addresses)

    @property
    def protected(self) -> frozenset[tuple[str, int]]:
        return self._protected

    def policy(self, allow: tuple[str, ...], deny: tuple[str, ...]) -> EgressPolicy:
        """The compiled policy of these rules (kept while the protected endpoints stay)."""
        key = (allow, deny)
        with self._lock:
            found = self._policies.get(key)
            if found is None:
                found = self._policies[key] = EgressPolicy(allow, deny, self._protected)
            return found

    def network(self, name: str, home: Path) -> ProfileNetwork:
        """The profile's namespace, started on first use; raises OSError if none can be made."""
        return self._network_at(Path(os.path.realpath(home)), name)

    def _network_at(self, key: Path, name: str, *, lease: bool = False) -> ProfileNetwork:
        ended: list[EgressListener] = []
        try:
            with self._lock:
                found = self._networks.get(key)
                if found is None or not found.alive:
                    if found is not None:
                        found.close()
                        ended = self._idle.pop(found, [])
                    found = self._networks[key] = ProfileNetwork.start(name)
                if lease:  # counted with the lookup: a forget now waits for this command
                    self._leased[found] = self._leased.get(found, 0) + 1
                return found
        finally:
            self._stop_all(ended)  # served in a namespace that has ended

    def _unlease(self, network: ProfileNetwork) -> None:
        """A command's lease in ``network`` ended; a forgotten namespace ends with its last."""
        with self._lock:
            left = self._leased.get(network, 1) - 1
            if left > 0:
                self._leased[network] = left
                return
            self._leased.pop(network, None)
            ending = network in self._retiring
            self._retiring.discard(network)
        if ending:
            network.close()

    def open(
        self, name: str, home: Path, allow: tuple[str, ...], deny: tuple[str, ...], tag: object
    ) -> EgressSession:
        """A listener for one command of profile ``name``; raises OSError with a one-line reason."""
        key = Path(os.path.realpath(home))
        network = self._network_at(key, name, lease=True)
        try:
            policy = self.policy(allow, deny)
            refusals: list[Refusal] = []
            with self._lock:
                idle = self._idle.get(network)
                listener = idle.pop() if idle else None
            if listener is not None:
                self._proxy.lease(listener, policy, on_refused=refusals.append, tag=tag)
            else:
                sock = network.listener()
                try:
                    listener = self._proxy.serve(sock, policy, on_refused=refusals.append, tag=tag)
                except BaseException:
                    sock.close()
                    raise
        except BaseException:
            self._unlease(network)
            raise
        served = listener

        def release() -> None:
            try:
                self._proxy.release(served, lambda done: self._offer(key, network, done))
            finally:
                self._unlease(network)

        try:
            enter = network.enter_argv()  # OSError once the holder has ended
        except BaseException:
            release()
            raise
        return EgressSession(proxy_env(int(listener.address[1])), enter, release, refusals)

    def _offer(self, key: Path, network: ProfileNetwork, listener: EgressListener) -> bool:
        """Keep ``listener`` for ``network``'s next command (asked on the proxy's thread)."""
        with self._lock:
            if self._networks.get(key) is not network:
                return False  # forgotten or replaced since: its listeners end with it
            idle = self._idle.setdefault(network, [])
            if len(idle) >= _IDLE_MAX:
                return False
            idle.append(listener)
            return True

    def forget(self, home: Path) -> None:
        """End the namespace of a home no longer served: its idle listeners now, its holder
        once no command holds a lease in it (one still starting enters it after this)."""
        with self._lock:
            if not self._networks:
                return  # nothing to end (no path to resolve: thousands of homes at close)
            found = self._networks.pop(Path(os.path.realpath(home)), None)
            if found is None:
                return
            ended = self._idle.pop(found, [])
            busy = self._leased.get(found, 0) > 0
            if busy:
                self._retiring.add(found)
        self._stop_all(ended)
        if not busy:
            found.close()

    def _stop_all(self, listeners: list[EgressListener]) -> None:
        for listener in listeners:
            with contextlib.suppress(Exception):  # the proxy may be closing too
                self._proxy.stop(listener)

    def close(self) -> None:
        """Stop the proxy and end every namespace; the hub may be used again later."""
        with self._lock:
            networks, self._networks = list(self._networks.values()), {}
            networks += self._retiring
            self._idle, self._retiring = {}, set()
        self._proxy.close()
        for network in networks:
            network.close()


@functools.cache
def default_hub() -> EgressHub:
    """The process's hub (every supervisor and direct ``execute`` call shares it)."""
    hub = EgressHub()
    atexit.register(hub.close)
    return hub
