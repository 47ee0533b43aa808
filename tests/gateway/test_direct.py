"""POST /v1/approvals/test answered by the HTTP protocol: the same bytes as the app, and every
other request handed to the app as it came (docs/gateway.md#performance).

Each hostile case runs twice: with the protocol's direct answers, and with them switched off
(every request through the app, as before): the answers must be the same bytes.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from multiplex.gateway.http._direct import MOST_BYTES
from tests.gateway.conftest import ADMIN, TOKENS, Gateway

PATH = "/v1/approvals/test"
ORDINARY = {"profile": "alpha", "command": "git push --force origin main"}


def request(
    body: bytes | dict[str, Any] = ORDINARY,
    *,
    token: str | None = ADMIN,
    target: str = PATH,
    head: str = "",
    content_type: str = "application/json",
    version: str = "HTTP/1.1",
) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    lines = [f"POST {target} {version}", "Host: t", f"Content-Length: {len(data)}"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n" + head + "\r\n").encode() + data


class Reader:
    """HTTP/1.1 answers read one at a time from a socket (``Content-Length`` bodies)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("the server closed the connection")
        self.buffer += chunk

    def answer(self) -> bytes:
        """The next whole answer (an interim ``100 Continue`` is one too)."""
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, _, _ = self.buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        size = len(head) + 4 + length
        while len(self.buffer) < size:
            self._fill()
        whole, self.buffer = self.buffer[:size], self.buffer[size:]
        return whole

    def closed(self) -> bool:
        """Whether the server closed the connection (and sent nothing more)."""
        try:
            return not self.buffer and self.sock.recv(1) == b""
        except ConnectionResetError:
            return True


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def document(answer: bytes) -> Any:
    return json.loads(answer.partition(b"\r\n\r\n")[2])


def undated(answer: bytes) -> bytes:
    """The answer without its Date header (the one line that may change between two answers)."""
    head, _, body = answer.partition(b"\r\n\r\n")
    kept = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"date:")]
    return b"\r\n".join(kept) + b"\r\n\r\n" + body


class Client:
    """Raw connections to the gateway, and whether its app was started for each request."""

    def __init__(self, gateway: Gateway, monkeypatch: pytest.MonkeyPatch) -> None:
        self.port = gateway.server.port
        self.protocol = gateway.server.protocol
        self.monkeypatch = monkeypatch
        self.app_calls = 0
        app = gateway.server.app
        front = app.front

        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.app_calls += 1
            await front(scope, receive, send)

        monkeypatch.setattr(app, "front", counted)
        gateway.sup.test("alpha", "true")  # a cold profile's first verdict is the gate pool's

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def exchange(self, *requests: bytes) -> list[bytes]:
        """Send ``requests`` at once (pipelined) on one connection; their answers in order."""
        with self.connect() as sock:
            sock.sendall(b"".join(requests))
            reader = Reader(sock)
            return [reader.answer() for _ in requests]


@pytest.fixture(params=["direct", "app"])
def each_path(
    request: pytest.FixtureRequest, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Client]:
    """A client of the gateway as served (``direct``), then with every request through the app."""
    served = Client(gateway, monkeypatch)
    if request.param == "app":
        monkeypatch.setattr(gateway.server.protocol, "direct", None)
    yield served


def both_ways(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, ask: Callable[[Client], list[bytes]]
) -> tuple[list[bytes], list[bytes], Client]:
    """``ask``'s answers with direct answers on, then with every request through the app."""
    served = Client(gateway, monkeypatch)
    direct = ask(served)
    calls = served.app_calls
    with monkeypatch.context() as patched:
        patched.setattr(gateway.server.protocol, "direct", None)
        through_app = ask(served)
    served.app_calls = calls
    return [undated(a) for a in direct], [undated(a) for a in through_app], served


# -- the ordinary request ---------------------------------------------------------------------


def test_an_ordinary_verdict_is_the_apps_answer_byte_for_byte_without_starting_it(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = [
        request(),
        request({**ORDINARY, "context": "cron", "session_id": "s1"}),
        request({"profile": "alpha", "command": "true"}, token=TOKENS["alpha"]),
        request(content_type="application/json; charset=utf-8"),
    ]
    direct, through_app, served = both_ways(gateway, monkeypatch, lambda c: c.exchange(*asked))
    assert served.app_calls == 0  # each answered by the protocol itself
    assert direct == through_app
    assert [status(a) for a in direct] == [200] * 4
    assert document(direct[0]) == gateway.sup.test("alpha", ORDINARY["command"]).as_dict()
    assert document(direct[1])["cause"] == "unattended: cron"
    assert document(direct[2])["outcome"] == "approved"
    for header in (b"content-security-policy:", b"x-frame-options: DENY", b"server: uvicorn"):
        assert header in direct[0]


# -- anything else goes to the app, whose answer it always was ---------------------------------

HOSTILE = {
    "wrong token": request(token="not-a-token-at-all-xxxxxxxx"),
    "no token": request(token=None),
    "not JSON": request(b'{"profile": "alpha", "command": '),
    "a key twice": request(b'{"profile": "alpha", "profile": "beta", "command": "true"}'),
    "no command": request({"profile": "alpha"}),
    "a control character": request({"profile": "alpha", "command": "echo \x1b[2J"}),
    "an empty body": request(b""),
    "not declared JSON": request(content_type="text/plain"),
    "no content type": request(content_type=""),
    "another profile's name": request(ORDINARY, token=TOKENS["beta"]),
    "an unknown profile": request({"profile": "ghost", "command": "true"}),
    "a long line": request({"profile": "alpha", "command": "echo " + "x" * 400}),
    "a query string": request(target=PATH + "?x=1"),
    "an escaped path": request(target="/v1/approvals%2Ftest"),
    "a body over the direct bound": request({**ORDINARY, "session_id": "s" * (MOST_BYTES // 20)}),
    "Expect: 100-continue": request(head="Expect: 100-continue\r\n"),
    "HTTP/1.0": request(version="HTTP/1.0"),
    "Connection: close": request(head="Connection: close\r\n"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_other_request_gets_the_apps_own_answer(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    def ask(c: Client) -> list[bytes]:
        with c.connect() as sock:
            sock.sendall(HOSTILE[case])
            reader = Reader(sock)
            first = reader.answer()
            return [first, reader.answer()] if status(first) == 100 else [first]

    direct, through_app, served = both_ways(gateway, monkeypatch, ask)
    assert direct == through_app
    if case in ("Connection: close", "HTTP/1.0"):
        assert served.app_calls == 0 and b"connection: close" in direct[-1]
    else:
        assert served.app_calls == 1  # the app answered it, as it always did
    if case in ("wrong token", "no token"):
        assert status(direct[0]) == 401
    elif case in ("not JSON", "a key twice"):
        assert status(direct[0]) == 400


def test_a_chunked_body_and_one_over_the_limit_get_the_apps_answers(each_path: Client) -> None:
    body = json.dumps(ORDINARY).encode()
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {ADMIN}\r\n"
    )
    chunked = (head + "Transfer-Encoding: chunked\r\n\r\n").encode()
    chunked += b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    answers = each_path.exchange(chunked)
    assert status(answers[0]) == 200 and document(answers[0])["command"] == ORDINARY["command"]
    with each_path.connect() as sock:  # refused before a byte of the body is read
        sock.sendall((head + "Content-Length: 99999999\r\n\r\n").encode())
        assert status(Reader(sock).answer()) == 413


# -- pipelining, split packets, slow and silent clients -----------------------------------------


def test_pipelined_requests_are_answered_in_order(each_path: Client) -> None:
    asked = [
        request(),
        request(token="not-a-token-at-all-xxxxxxxx"),
        b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n",
        request({"profile": "alpha", "command": "true"}),
        request(b"{not json"),
        request({"profile": "alpha", "command": "ls"}),
    ]
    answers = each_path.exchange(*asked)
    assert [status(a) for a in answers] == [200, 401, 200, 200, 400, 200]
    assert [document(answers[i])["command"] for i in (0, 3, 5)] == [
        ORDINARY["command"],
        "true",
        "ls",
    ]


def test_a_request_split_across_packets_is_answered_once_whole(each_path: Client) -> None:
    whole = request()
    cuts = [0, 17, whole.index(b"\r\n\r\n") + 2, len(whole) - 9, len(whole)]
    with each_path.connect() as sock:
        for start, end in itertools.pairwise(cuts):
            sock.sendall(whole[start:end])
            time.sleep(0.05)
        answer = Reader(sock).answer()
    assert status(answer) == 200 and document(answer)["command"] == ORDINARY["command"]


def test_a_slow_client_holds_no_one_else_up_and_one_that_leaves_costs_nothing(
    gateway: Gateway, each_path: Client
) -> None:
    whole = request()
    open_before = gateway.server.connections.total
    slow, leaver = each_path.connect(), each_path.connect()
    try:
        slow.sendall(whole[:-10])  # the head and most of the body, then nothing for a while
        leaver.sendall(whole[:-10])
        time.sleep(0.1)
        leaver.close()  # gone mid-body: nothing is answered, nothing is left
        # Meanwhile everyone else is answered.
        for _ in range(3):
            assert status(each_path.exchange(request())[0]) == 200
        slow.sendall(whole[-10:])
        answer = Reader(slow).answer()
        assert status(answer) == 200 and document(answer)["command"] == ORDINARY["command"]
    finally:
        slow.close()
    deadline = time.monotonic() + 10
    while gateway.server.connections.total != open_before:
        assert time.monotonic() < deadline, "a connection was never released"
        time.sleep(0.02)


def test_a_client_that_reads_its_answers_late_gets_every_one_in_order(each_path: Client) -> None:
    count = 1500  # more answers than the socket buffers hold: the server must wait for it
    asked = [request({"profile": "alpha", "command": f"echo {i}"}) for i in range(count)]
    with each_path.connect() as sock:
        sender = threading.Thread(target=sock.sendall, args=(b"".join(asked),))
        sender.start()
        time.sleep(0.5)  # nothing read yet
        reader = Reader(sock)
        commands = [document(reader.answer())["command"] for _ in range(count)]
        sender.join(30)
    assert commands == [f"echo {i}" for i in range(count)]


def test_a_request_pipelined_behind_an_answer_is_not_cut_by_the_keep_alive_timer(
    each_path: Client,
) -> None:
    # uvicorn closes an idle kept-alive connection after 5 s; a long request sent in the
    # same packet as a verdict is not idle, however soon the verdict was answered.
    run = json.dumps({"commands": ["echo needs a human"], "wait": 6}).encode()
    long = (
        f"POST /v1/runs HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {TOKENS['alpha']}\r\nContent-Length: {len(run)}\r\n\r\n"
    ).encode() + run
    verdict, parked = each_path.exchange(request(), long)
    assert status(verdict) == 200
    assert status(parked) == 202 and document(parked)["status"] == "waiting_for_approval"
