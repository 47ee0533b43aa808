"""docs/gateway.md#performance: a response's head and body leave in one write, order kept."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from multiplex.gateway.http._gathered import _Gathered
from tests.gateway.conftest import ADMIN, Gateway


class _Counting(asyncio.Transport):
    """The loop's real socket transport, with its writes counted."""

    def __init__(self, real: asyncio.Transport) -> None:
        super().__init__()
        self.real = real
        self.writes: list[bytes] = []

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))
        self.real.write(data)

    def close(self) -> None:
        self.real.close()

    def abort(self) -> None:
        self.real.abort()

    def is_closing(self) -> bool:
        return self.real.is_closing()

    def get_write_buffer_size(self) -> int:
        return self.real.get_write_buffer_size()


async def _pair() -> tuple[_Counting, _Gathered, socket.socket]:
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    listener.close()
    server.setblocking(False)
    transport, _protocol = await asyncio.get_running_loop().connect_accepted_socket(
        asyncio.Protocol, server
    )
    counting = _Counting(transport)
    return counting, _Gathered(counting, asyncio.get_running_loop()), client


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(5)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_writes_of_one_loop_turn_become_one_write_in_order() -> None:
    async def scenario() -> tuple[list[bytes], bytes]:
        counting, gathered, client = await _pair()
        gathered.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        gathered.write(memoryview(b"ok"))
        assert gathered.get_write_buffer_size() >= 40 and counting.writes == []
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        gathered.write(b"later")  # the next turn: a write of its own
        await asyncio.sleep(0.01)
        gathered.close()
        await asyncio.sleep(0.01)
        return counting.writes, await asyncio.to_thread(_read_all, client)

    writes, received = asyncio.run(scenario())
    assert writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", b"later"]
    assert received == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\noklater"


def test_close_sends_what_is_gathered_first_and_abort_drops_it() -> None:
    async def scenario() -> tuple[bytes, list[bytes]]:
        _counting, gathered, client = await _pair()
        gathered.write(b"last words")
        gathered.close()  # in the same turn: the bytes still go out, then EOF
        closed = await asyncio.to_thread(_read_all, client)
        other, aborted, client2 = await _pair()
        aborted.write(b"never sent")
        aborted.abort()
        await asyncio.sleep(0.01)
        client2.settimeout(5)
        try:
            rest = client2.recv(100)
        except ConnectionResetError:
            rest = b""
        assert rest == b""
        return closed, other.writes

    closed, aborted_writes = asyncio.run(scenario())
    assert closed == b"last words"
    assert aborted_writes == []


def test_a_connection_close_request_gets_its_whole_answer(gateway: Gateway) -> None:
    host, port = gateway.server.host, gateway.server.port
    with socket.create_connection((host, port)) as sock:
        sock.sendall(
            b"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            + f"Authorization: Bearer {ADMIN}\r\n\r\n".encode()
        )
        answer = _read_all(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"x-frame-options: DENY" in head
    assert body == b'{"role":"admin","profile":null}'
