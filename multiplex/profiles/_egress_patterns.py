"""The pattern language of ``terminal.egress.allow`` and ``deny`` (docs/execution.md#egress).

Part of the config: ``pypi.org``, ``*.pythonhosted.org`` (any subdomain, not
the apex), ``localhost:5432``, ``10.0.0.7``, ``[::1]:8080``; no port means any
port. The schema validates entries with :func:`parse_egress_pattern`; the
egress proxy's policy (``multiplex.execution.egress``) matches them.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

__all__ = ["EgressPattern", "is_ip_literal", "normalize_host", "parse_egress_pattern", "parse_ip"]

_IP = ipaddress.IPv4Address | ipaddress.IPv6Address
_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
_HOSTNAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_HOST_PORT = re.compile(r"^(?P<host>[^:\[\]]+)(:(?P<port>[^:]*))?$")
_BRACKETED = re.compile(r"^\[(?P<host>[^\]]+)\](:(?P<port>.*))?$")


@dataclass(frozen=True, slots=True)
class EgressPattern:
    """One parsed allow/deny entry: a host (``*.`` for any subdomain) and maybe a port."""

    host: str  # lower case, no trailing dot, no brackets; "*.x" for a wildcard
    port: int | None
    text: str

    @property
    def wildcard(self) -> bool:
        return self.host.startswith("*.")

    def matches(self, host: str, port: int) -> bool:
        """Whether this pattern names ``host`` (normalized) at ``port``."""
        if self.port is not None and self.port != port:
            return False
        if self.wildcard:
            return host.endswith(self.host[1:])  # ".x": any subdomain, never the apex
        return host == self.host


def parse_ip(text: str) -> _IP | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_ip_literal(host: str) -> bool:
    """Whether ``host`` is an IPv4 or IPv6 address in canonical text (as normalize_host gives)."""
    return parse_ip(host) is not None


def normalize_host(host: str) -> str | None:
    """``host`` as patterns are compared with, or None if it is no host name or IP."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    ip = parse_ip(host)
    if ip is not None:
        return str(ip)
    host = host.removesuffix(".")
    if len(host) > 253 or not _HOSTNAME.match(host):
        return None
    return host


def parse_egress_pattern(text: str) -> EgressPattern:
    """Parse one ``terminal.egress`` entry; ValueError with a one-line message if bad."""
    raw = text.strip()
    if not raw:
        raise ValueError("an egress pattern is empty")
    lowered = raw.lower()
    if "/" in lowered:
        raise ValueError(
            f"egress pattern {raw!r}: expected host, host:port or [ipv6]:port, not a URL"
        )
    if match := _BRACKETED.match(lowered):
        host_text, port_text = match["host"], match["port"]
        if not isinstance(parse_ip(host_text), ipaddress.IPv6Address):
            raise ValueError(f"egress pattern {raw!r}: only an IPv6 address goes in brackets")
    elif lowered.count(":") > 1:
        host_text, port_text = lowered, None  # a bare IPv6 address, any port
        if parse_ip(host_text) is None:
            raise ValueError(
                f"egress pattern {raw!r}: not an IPv6 address (write [addr]:port for a port)"
            )
    elif match := _HOST_PORT.match(lowered):
        host_text, port_text = match["host"], match["port"]
    else:
        raise ValueError(f"egress pattern {raw!r}: expected host, host:port or [ipv6]:port")
    port = _parse_port(raw, port_text)
    wildcard = host_text.startswith("*.")
    host = normalize_host(host_text[2:] if wildcard else host_text)
    if host is None or "*" in host_text[2 if wildcard else 0 :]:
        raise ValueError(
            f"egress pattern {raw!r}: {host_text!r} is not a host name, IP address or *.domain"
        )
    if wildcard and parse_ip(host) is not None:
        raise ValueError(f"egress pattern {raw!r}: a wildcard takes a domain, not an address")
    return EgressPattern(host=f"*.{host}" if wildcard else host, port=port, text=raw)


def _parse_port(raw: str, port_text: str | None) -> int | None:
    if port_text is None:
        return None
    if port_text == "*":
        raise ValueError(f"egress pattern {raw!r}: leave the port out to mean any port")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"egress pattern {raw!r}: port {port_text!r} is not 1-65535")
    return int(port_text)
