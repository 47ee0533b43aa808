"""Which (host, port) a sandboxed command may reach through its egress proxy.

docs/execution.md#egress: ``terminal.egress.allow`` and ``terminal.egress.deny``
hold patterns (``pypi.org``, ``*.pythonhosted.org``, ``localhost:5432``,
``10.0.0.7``, ``[::1]:8080``); a pattern without a port means any port. The
decision has two halves: :meth:`EgressPolicy.check_name` on the name the client
asked for, and :meth:`EgressPolicy.decide` on the addresses the proxy resolved
that name to. The proxy resolves (clients never do) and connects only to an
address :meth:`decide` returned, so a name that re-resolves elsewhere between
check and connect (DNS rebinding) cannot reach anything unvetted.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from multiplex.profiles._egress_patterns import (
    EgressPattern,
    is_ip_literal,
    normalize_host,
    parse_egress_pattern,
)
from multiplex.profiles._egress_patterns import parse_ip as _parse_ip

_IP = ipaddress.IPv4Address | ipaddress.IPv6Address

__all__ = [
    "EgressPattern",
    "EgressPolicy",
    "EgressVerdict",
    "RefusalReason",
    "address_kind",
    "is_ip_literal",
    "normalize_host",
    "parse_egress_pattern",
]

# Shared address space (RFC 6598), which ipaddress neither calls private nor global.
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class RefusalReason(enum.Enum):
    """Why a destination was refused; the value is the message's parenthesis."""

    DENIED = "in egress.deny"
    NOT_ALLOWED = "not in egress.allow"
    PRIVATE_ADDRESS = "resolves to a non-public address"
    PROTECTED = "resolves to a protected endpoint"
    BAD_HOST = "not a host name"


@dataclass(frozen=True, slots=True)
class EgressVerdict:
    """The decision for one request: the vetted addresses to try, or why none.

    ``addresses`` are in the order to try them; empty exactly when refused.
    """

    host: str
    port: int
    addresses: tuple[str, ...]
    reason: RefusalReason | None
    message: str

    @property
    def allowed(self) -> bool:
        return self.reason is None


def address_kind(address: str) -> str | None:
    """What makes ``address`` non-public (``"loopback"``, ``"private"``…), or None.

    IPv4 embedded in IPv6 (mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``,
    6to4 ``2002::/16``) is judged by the IPv4 address it carries.
    """
    ip = _parse_ip(address.split("%", 1)[0])  # an IPv6 zone id says nothing more
    if ip is None:
        return "unparsable"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return address_kind(str(embedded))
    # Order matters: the narrower names first (127/8 is also "private").
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "shared (CGNAT)"
    if ip.is_reserved:  # 240/4 and broadcast, which ipaddress also calls private
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "reserved"
    return None


class EgressPolicy:
    """One profile's egress rules, compiled once; every method is cheap and pure.

    ``protected`` holds (address, port) endpoints of the supervisor itself (the
    gateway, the cluster's Redis): reached only when an allow pattern names the
    requested host with exactly that port.
    """

    def __init__(
        self,
        allow: Iterable[str | EgressPattern] = (),
        deny: Iterable[str | EgressPattern] = (),
        protected: Iterable[tuple[str, int]] = (),
    ) -> None:
        self.allow = tuple(_pattern(p) for p in allow)
        self.deny = tuple(_pattern(p) for p in deny)
        self.protected = frozenset(
            (normalize_host(address) or address, port) for address, port in protected
        )
        self._exact_allow = tuple(p for p in self.allow if not p.wildcard)
        self._deny_ips = tuple(p for p in self.deny if _parse_ip(p.host) is not None)

    def __repr__(self) -> str:
        allow = [p.text for p in self.allow]
        deny = [p.text for p in self.deny]
        return f"EgressPolicy(allow={allow}, deny={deny}, protected={sorted(self.protected)})"

    def check_name(self, host: str, port: int) -> EgressVerdict | None:
        """Steps 1-2 (deny, then allow) on the requested name: a refusal, or None to go on."""
        name = normalize_host(host)
        if name is None or not 0 < port < 65536:
            return _refused(host, port, RefusalReason.BAD_HOST)
        if any(p.matches(name, port) for p in self.deny):
            return _refused(name, port, RefusalReason.DENIED)
        if self.allow and not any(p.matches(name, port) for p in self.allow):
            return _refused(name, port, RefusalReason.NOT_ALLOWED)
        return None

    def decide(self, host: str, port: int, addresses: Iterable[str]) -> EgressVerdict:
        """The whole decision for ``host:port`` given what the proxy resolved it to.

        An address that is not public, or is a protected endpoint, or is named
        by a deny pattern, is dropped unless an exact (non-wildcard) allow
        pattern names the requested host, or that address, at that port; the
        verdict keeps the rest in order, or refuses with the first reason.
        """
        refused = self.check_name(host, port)
        if refused is not None:
            return refused
        name = normalize_host(host) or host
        vetted: list[str] = []
        first: EgressVerdict | None = None
        for raw in addresses:
            address = normalize_host(raw) or raw
            refusal = self._vet(name, address, port)
            if refusal is None:
                if address not in vetted:
                    vetted.append(address)
            elif first is None:
                first = refusal
        if vetted:
            return EgressVerdict(name, port, tuple(vetted), None, f"allowed {_hp(name, port)}")
        if first is not None:
            return first
        return _refused(name, port, RefusalReason.BAD_HOST, "resolves to no address")

    def _vet(self, name: str, address: str, port: int) -> EgressVerdict | None:
        if any(p.matches(address, port) for p in self._deny_ips):
            return _refused(name, port, RefusalReason.DENIED, f"resolves to denied {address}")
        named = [p for p in self._exact_allow if p.host in (name, address)]
        if (address, port) in self.protected:
            if any(p.port == port for p in named):
                return None
            return _refused(
                name,
                port,
                RefusalReason.PROTECTED,
                f"resolves to protected endpoint {_hp(address, port)}",
            )
        kind = address_kind(address)
        if kind is None or any(p.port in (None, port) for p in named):
            return None
        return _refused(
            name, port, RefusalReason.PRIVATE_ADDRESS, f"resolves to {kind} address {address}"
        )


def _pattern(value: str | EgressPattern) -> EgressPattern:
    return value if isinstance(value, EgressPattern) else parse_egress_pattern(value)


def _hp(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _refused(
    host: str, port: int, reason: RefusalReason, detail: str | None = None
) -> EgressVerdict:
    shown = host if normalize_host(host) is not None else repr(host)
    message = f"refused {_hp(shown, port)} ({detail or reason.value})"
    return EgressVerdict(host, port, (), reason, message)
