"""``POST /v1/approvals/test`` answered by the HTTP protocol itself (docs/gateway.md#performance).

Agents ask for verdicts thousands of times a second, and each one costs the
gate tens of microseconds: an ASGI task per request, the middleware's
coroutines and messages and the framework's response would cost more than the
decision. :class:`DirectHttp` is uvicorn's protocol (the same parser, the same
keep-alive, pipelining and flow control) that answers the ordinary case of
that one route once its body is in, without starting the app: an authorised
caller, a body declared and sent as JSON within the body limit, one that
validates, and a line the gateway decides on the event loop anyway
(:func:`~multiplex.gateway.api._verdict.decided_on_loop`). The answer's bytes
are those the app would send (the same headers, in the same order).

Anything else (no or an unknown token, a body that is not JSON or does not
validate, another profile's name, a long line, a cold profile, a cluster node,
a chunked or oversized body, ``Expect``, a query string, a client that does not
read its answers) starts the app with the request as it came, so its answer
(401, 400, 404, 413, 422, the gate pool) is exactly what it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ClassVar, cast

from pydantic import ValidationError
from starlette.types import ASGIApp, Scope
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, RequestResponseCycle
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

from multiplex._errors import RoutingError
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._models import TestIn
from multiplex.gateway.api._verdict import decided_on_loop
from multiplex.gateway.http._connections import ConnectionGuard, GuardedHttp
from multiplex.gateway.http._fastpath import token_and_json
from multiplex.gateway.http._headers import ALL_HEADERS
from multiplex.gateway.http._json import dumps
from multiplex.gateway.http._json_body import refusal

__all__ = ["DirectAnswers", "DirectHttp"]

log = logging.getLogger("multiplex.gateway")

_PATH = b"/v1/approvals/test"
# A body longer than this cannot hold a line decided on the loop: the app answers it.
MOST_BYTES = 4096
_NOT_DIRECT = (b"transfer-encoding", b"expect", b"upgrade")
# After the content-length, what the route's answer carries (_http.py, then _headers.py).
_TAIL = b"content-type: application/json\r\n" + b"".join(
    name + b": " + value + b"\r\n" for name, value in ALL_HEADERS
)


class DirectAnswers:
    """Which requests the protocol may answer itself, and their answers."""

    def __init__(self, gateway: Gateway, limit: Callable[[], int]) -> None:
        self._gateway = gateway
        self._limit = limit  # gateway.max_request_bytes, read per request

    def takes(self, scope: Scope) -> bool:
        """Whether the request of ``scope`` (its head) may be answered here once its body is in."""
        if scope["raw_path"] != _PATH or scope["method"] != "POST" or scope["query_string"]:
            return False
        declared = -1
        for key, value in scope["headers"]:
            if key == b"content-length":
                if not value.isdigit() or declared >= 0:
                    return False
                declared = int(value)
            elif key in _NOT_DIRECT:
                return False
        return 0 < declared <= MOST_BYTES and declared <= self._limit()

    def answer(self, scope: Scope, body: bytes) -> bytes | None:
        """The verdict's JSON document, or None when the app must answer (before any side effect)."""
        gw = self._gateway
        token, is_json = token_and_json(scope)
        caller = gw.auth.identify(token)
        if caller is None or not is_json or refusal(body) is not None:
            return None
        try:
            asked = TestIn.model_validate_json(body)
        except ValidationError:
            return None
        if not caller.sees(asked.profile) or not decided_on_loop(gw, asked):
            return None
        try:
            verdict = gw.sup.test(asked.profile, asked.command, asked.context, asked.session_id)
        except RoutingError:
            return None
        return dumps(verdict.as_dict())


class DirectHttp(GuardedHttp):
    """The gateway's protocol, answering what :class:`DirectAnswers` takes without the app."""

    direct: ClassVar[DirectAnswers | None] = None
    _held: tuple[RequestResponseCycle, ASGIApp] | None = None  # a taken request, its body coming

    @classmethod
    def answering(cls, guard: ConnectionGuard, direct: DirectAnswers | None) -> type[DirectHttp]:
        """This protocol counting its connections in ``guard``, answering what ``direct`` takes."""
        return type("GuardedHttp", (cls,), {"guard": guard, "direct": direct})

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGIApp) -> None:  # type: ignore[override]
        # A request has begun: the keep-alive timer runs only between requests. (One
        # answered during this turn's parse armed it; uvicorn's answers never come that soon.)
        self._unset_keepalive_if_required()
        direct = self.direct
        if direct is None or app is not self.app or not direct.takes(_scope(cycle)):
            super()._start_asgi_task(cycle, app)  # type: ignore[arg-type]
        elif cycle.more_body:
            self._held = (cycle, app)  # answered at on_message_complete
        else:
            # A pipelined request, started as the one before it ends: in a turn of its own,
            # so a long pipeline never recurses.
            self.loop.call_soon(self._answer, cycle, app)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        held = self._held
        if held is not None and held[0] is self.cycle and not self.cycle.more_body:
            self._held = None
            self._answer(*held)

    def connection_lost(self, exc: Exception | None) -> None:
        self._held = None
        super().connection_lost(exc)

    def _answer(self, cycle: RequestResponseCycle, app: ASGIApp) -> None:
        if cycle.disconnected:
            return
        document: bytes | None = None
        # A client that does not read its answers: the app's send waits for it to drain.
        if not self.flow.write_paused and self.direct is not None:
            try:
                document = self.direct.answer(_scope(cycle), bytes(cycle.body))
            except Exception:  # the app meets the same failure and answers it (500, logged)
                log.debug(
                    "approvals/test: the direct answer failed; the app answers", exc_info=True
                )
        if document is None:
            super()._start_asgi_task(cycle, app)  # type: ignore[arg-type]
            return
        scope = cycle.scope
        if cycle.access_log:  # uvicorn's line, as its own send would log it
            self.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                *(get_client_addr(scope), scope["method"], get_path_with_query_string(scope)),
                *(scope["http_version"], 200),
            )
        parts = [STATUS_LINE[200]]
        for name, value in cycle.default_headers:
            parts += (name, b": ", value, b"\r\n")
        parts += (b"content-length: %d\r\n" % len(document), _TAIL)
        if not cycle.keep_alive:  # the client asked, or the server is stopping
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", document)
        self.write_whole(b"".join(parts))
        cycle.response_started = cycle.response_complete = True
        cycle.waiting_for_100_continue = False
        cycle.message_event.set()
        if not cycle.keep_alive:
            self.transport.close()
        cycle.on_response()


def _scope(cycle: RequestResponseCycle) -> Scope:
    return cast(Scope, cycle.scope)  # uvicorn's HTTPScope: an ASGI scope
