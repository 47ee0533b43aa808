"""``POST /v1/approvals/test``: where the gate's checks run (docs/gateway.md#performance).

The route and the fast path share :func:`verdict_of`.
"""

from __future__ import annotations

from starlette.responses import Response

from multiplex._errors import RoutingError
from multiplex.gateway._gateway import Gateway
from multiplex.gateway.api._models import TestIn
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._http import json_response, no_profile

__all__ = ["ON_LOOP_MAX", "decided_on_loop", "verdict_of"]

# Characters: the slowest such lines measured (128 pipes, 50 nested wrappers)
# take 1-2.5 ms of checks, under the 5 ms switch interval.
ON_LOOP_MAX = 256


async def verdict_of(gw: Gateway, caller: Principal, body: TestIn) -> Response:
    """``POST /v1/approvals/test`` (the route and the fast path share it).

    A line of at most :data:`ON_LOOP_MAX` characters, for a profile whose rule
    index is built, is decided on the event loop: its checks take at most a few
    milliseconds, less than the interpreter's switch interval, so a gate thread
    would hold the loop back as long, and the thread hop costs more than such a
    decision. A longer line, a profile to build first, or a cluster node (the
    session grants are read from Redis) goes to the gateway's gate pool: a
    pathological line never stalls other requests (docs/gateway.md#performance).
    """
    if not caller.sees(body.profile):
        raise no_profile(caller, body.profile)
    sup = gw.sup
    try:
        if decided_on_loop(gw, body):
            verdict = sup.test(body.profile, body.command, body.context, body.session_id)
        else:
            verdict = await gw.off_loop(
                sup.test, body.profile, body.command, body.context, body.session_id
            )
    except RoutingError as exc:
        raise no_profile(caller, body.profile, str(exc)) from None
    return json_response(verdict.as_dict())


def decided_on_loop(gw: Gateway, body: TestIn) -> bool:
    """Whether ``body``'s verdict is worked out on the event loop (see :func:`verdict_of`)."""
    return (
        gw.cluster is None
        and len(body.command) <= ON_LOOP_MAX
        and gw.sup.test_is_warm(body.profile)
    )
