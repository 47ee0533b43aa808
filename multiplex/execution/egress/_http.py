"""The HTTP/1.1 front end: ``CONNECT host:port`` tunnels and absolute-form forwarding.

A forwarded request (``GET http://host/path HTTP/1.1``) goes to the origin in
origin form with ``Proxy-*`` and hop-by-hop headers dropped, on a connection kept
for the client's next request to the same host and port; its body (Content-Length or
chunked) and the response's are streamed, never held whole. The client's
connection is kept alive when the response's length is known. A request
with both Content-Length and Transfer-Encoding, or an ambiguous length, is
refused (400): the origin might frame it differently (request smuggling).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from multiplex.execution.egress._exchange import ConnectFailed, Exchange, Refused
from multiplex.execution.egress._stream import HeadTooLong, Stream, splice

__all__ = ["serve_http"]

_CHUNK = 256 * 1024
_RESPONSE_HEAD = 64 * 1024
_TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"proxy-authorization",
    b"proxy-authenticate",
    b"te",
    b"trailer",
    b"upgrade",
}
_STATUS_FOR = {"unresolved": 502, "refused": 502, "unreachable": 502, "timeout": 504}
_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
    504: "Gateway Timeout",
}


class BadMessage(ValueError):
    """A request or response head this proxy will not pass on."""


@dataclass(frozen=True, slots=True)
class _Head:
    start: tuple[bytes, bytes, bytes]  # request line or status line, split in three
    headers: list[tuple[bytes, bytes]]

    def values(self, name: bytes) -> list[bytes]:
        return [v for n, v in self.headers if n.lower() == name]

    def body_length(self) -> int | None:
        """Content-Length, -1 for chunked, None if neither is given."""
        codings = b",".join(self.values(b"transfer-encoding")).lower()
        lengths = {v.strip() for v in self.values(b"content-length")}
        if codings:
            if lengths or [c.strip() for c in codings.split(b",")][-1] != b"chunked":
                raise BadMessage("ambiguous message length")
            return -1
        if not lengths:
            return None
        if len(lengths) > 1 or not next(iter(lengths)).isdigit():
            raise BadMessage("bad Content-Length")
        return int(next(iter(lengths)))

    def forwarded_headers(self, *drop: bytes) -> bytes:
        named = {*drop} | {
            t.strip().lower() for v in self.values(b"connection") for t in v.split(b",") if t
        }
        return b"".join(
            n + b": " + v + b"\r\n"
            for n, v in self.headers
            if n.lower() not in _HOP_BY_HOP
            and n.lower() not in named
            and not n.lower().startswith(b"proxy-")
        )


def _parse_head(raw: bytes) -> _Head:
    lines = raw[:-4].split(b"\r\n")
    start = lines[0].split(b" ", 2)
    if len(start) != 3:
        raise BadMessage("bad start line")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.match(name):  # also refuses obs-fold continuation lines
            raise BadMessage("bad header line")
        headers.append((name, value.strip()))
    return _Head((start[0], start[1], start[2]), headers)


def _answer(client: Stream, status: int, text: str) -> None:
    body = f"multiplex egress: {text}\n".encode()
    client.write(
        f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    parts = urlsplit("//" + text)
    try:
        port = parts.port or default_port
    except ValueError:
        port = None
    if not parts.hostname or port is None or parts.username is not None:
        raise BadMessage(f"bad authority {text!r}")
    return parts.hostname, port


async def _copy_body(src: Stream, dst: Stream, length: int | None) -> None:
    """Copy one body framed by ``length`` (-1 chunked, None: until EOF)."""
    if length == -1:
        while True:
            line = await src.read_until(b"\r\n", 4096)
            size_text = line.split(b";", 1)[0].strip()
            if not size_text or not all(c in b"0123456789abcdefABCDEF" for c in size_text):
                raise BadMessage("bad chunk size")
            size = int(size_text, 16)
            dst.write(line)
            if size == 0:
                while (trailer := await src.read_until(b"\r\n", 4096)) != b"\r\n":
                    dst.write(trailer)
                dst.write(b"\r\n")
                return
            await _copy_exactly(src, dst, size + 2)
    elif length is None:
        while data := await src.read_some(_CHUNK):
            dst.write(data)
            await dst.drain()
    else:
        await _copy_exactly(src, dst, length)


async def _copy_exactly(src: Stream, dst: Stream, count: int) -> None:
    while count:
        data = await src.read_some(min(count, _CHUNK))
        if not data:
            raise EOFError("connection closed mid-body")
        dst.write(data)
        count -= len(data)
        await dst.drain()


async def _forward(exchange: Exchange, head: _Head) -> bool:
    """Forward one absolute-form request; True if the client connection may be reused."""
    client = exchange.client
    method, target, version = head.start
    url = urlsplit(target.decode("latin-1"))
    if url.scheme.lower() != "http" or not url.netloc:
        raise BadMessage("not an absolute http:// URL (use CONNECT for https)")
    host, port = _authority(url.netloc, 80)
    request_length = head.body_length()
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    request = (
        method + b" " + path.encode("latin-1") + b" HTTP/1.1\r\nHost: "
        + url.netloc.encode("latin-1") + b"\r\n" + head.forwarded_headers(b"host", b"expect") + b"\r\n"
    )  # fmt: skip
    upstream = exchange.upstream
    reused = upstream is not None and exchange.upstream_for == (host, port)
    if upstream is None or not reused or upstream.at_eof:
        upstream, reused = await exchange.open(host, port), False
    upstream.write(request)
    if request_length and any(v.lower() == b"100-continue" for v in head.values(b"expect")):
        # The body is read before the origin's answer: say go on at once (the
        # Expect header is not passed on, so the origin sends no 100 of its own).
        client.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    await _copy_body(client, upstream, request_length or 0)
    try:
        response = await _final_response(client, upstream)
    except EOFError:
        if not reused or request_length:
            raise
        # The origin closed the kept-alive connection as we reused it: once more, afresh.
        upstream = await exchange.open(host, port)
        upstream.write(request)
        response = await _final_response(client, upstream)
    status = response.start[1]
    length = response.body_length()
    if method == b"HEAD" or status in (b"204", b"304"):
        length = 0
    framed = length is not None and status != b"101"
    keep = framed and version == b"HTTP/1.1"
    keep = keep and not any(b"close" in v.lower() for v in head.values(b"connection"))
    client.write(
        b" ".join(response.start) + b"\r\n" + response.forwarded_headers()
        + (b"" if keep else b"Connection: close\r\n") + b"\r\n"
    )  # fmt: skip
    await _copy_body(upstream, client, length)
    if not framed or any(b"close" in v.lower() for v in response.values(b"connection")):
        upstream.close()
        exchange.upstream = exchange.upstream_for = None
    return keep


async def _final_response(client: Stream, upstream: Stream) -> _Head:
    """The response head after any 1xx interim ones, which are passed on as they come."""
    while True:
        response = _parse_head(await upstream.read_until(b"\r\n\r\n", _RESPONSE_HEAD))
        status = response.start[1]
        if not (status.startswith(b"1") and status != b"101"):
            return response
        client.write(b" ".join(response.start) + b"\r\n" + response.forwarded_headers() + b"\r\n")


async def serve_http(exchange: Exchange) -> None:
    """Serve one HTTP proxy connection (maybe several requests) to its end."""
    client = exchange.client
    limits = exchange.limits
    first = True
    while True:
        try:
            async with asyncio.timeout(limits.head_timeout):
                raw = await client.read_until(b"\r\n\r\n", limits.head_bytes)
        except HeadTooLong:
            _answer(client, 431, f"request head over {limits.head_bytes} bytes")
            return
        except TimeoutError:
            if first:  # an idle kept-alive connection just ends
                _answer(client, 408, f"no request head within {limits.head_timeout:g} s")
            return
        except EOFError:
            return
        first = False
        try:
            head = _parse_head(raw)
            if head.start[0] == b"CONNECT":
                host, port = _authority(head.start[1].decode("latin-1"), None)
                upstream = await exchange.open(host, port)
                client.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await splice(client, upstream)
                return
            if not await _forward(exchange, head):
                return
        except Refused as exc:
            _answer(client, 403, exc.verdict.message)
            return
        except ConnectFailed as exc:
            _answer(client, _STATUS_FOR.get(exc.kind, 502), str(exc))
            return
        except (BadMessage, UnicodeError) as exc:
            _answer(client, 400, str(exc))
            return
        except (EOFError, HeadTooLong, ConnectionError):
            return
