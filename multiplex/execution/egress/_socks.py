"""The SOCKS5 front end (RFC 1928): no authentication, CONNECT only.

A refusal by policy answers 0x02 ("connection not allowed by ruleset"), an
unreachable or refusing destination 0x04 / 0x05, BIND and UDP ASSOCIATE 0x07.
A domain name (socks5h) is resolved by the proxy; an IP literal is vetted the
same way.
"""

from __future__ import annotations

import asyncio
import ipaddress

from multiplex.execution.egress._exchange import ConnectFailed, Exchange, Refused
from multiplex.execution.egress._stream import splice

__all__ = ["serve_socks"]

_NO_AUTH, _NO_ACCEPTABLE = 0x00, 0xFF
_CONNECT = 0x01
_OK, _GENERAL, _RULESET, _NETWORK, _HOST, _REFUSED, _TTL, _COMMAND, _ATYP = range(9)
_FAILURE = {"unresolved": _HOST, "refused": _REFUSED, "unreachable": _HOST, "timeout": _TTL}


def _reply(code: int) -> bytes:
    # The bound address is not useful to a CONNECT client; 0.0.0.0:0 is allowed.
    return bytes((5, code, 0, 1, 0, 0, 0, 0, 0, 0))


async def _read_request(exchange: Exchange) -> tuple[str, int] | None:
    """The CONNECT target, or None after answering a request this proxy does not serve."""
    client = exchange.client
    _version, count = await client.read_exactly(2)
    methods = await client.read_exactly(count)
    if _NO_AUTH not in methods:
        client.write(bytes((5, _NO_ACCEPTABLE)))
        return None
    client.write(bytes((5, _NO_AUTH)))
    version, command, _reserved, atyp = await client.read_exactly(4)
    if version != 5:
        return None
    if atyp == 1:
        host = str(ipaddress.IPv4Address(await client.read_exactly(4)))
    elif atyp == 4:
        host = str(ipaddress.IPv6Address(await client.read_exactly(16)))
    elif atyp == 3:
        (length,) = await client.read_exactly(1)
        host = (await client.read_exactly(length)).decode("ascii", "replace")
    else:
        client.write(_reply(_ATYP))
        return None
    port = int.from_bytes(await client.read_exactly(2), "big")
    if command != _CONNECT:
        client.write(_reply(_COMMAND))
        return None
    return host, port


async def serve_socks(exchange: Exchange) -> None:
    """Serve one SOCKS5 connection to its end."""
    client = exchange.client
    try:
        async with asyncio.timeout(exchange.limits.head_timeout):
            target = await _read_request(exchange)
    except (EOFError, TimeoutError):
        return
    if target is None:
        return
    try:
        upstream = await exchange.open(*target)
    except Refused:
        client.write(_reply(_RULESET))
        return
    except ConnectFailed as exc:
        client.write(_reply(_FAILURE.get(exc.kind, _GENERAL)))
        return
    client.write(_reply(_OK))
    await splice(client, upstream)
