"""Egress of a sandboxed command: its policy and the proxy that enforces it (docs/execution.md#egress).

``_policy`` decides which (host, port) a profile may reach and vets the
addresses a name resolves to; ``_proxy`` runs one event loop thread serving
every profile's listening socket (SOCKS5 and HTTP/1.1 on one port, fronts in
``_socks`` and ``_http``, both opening connections only through
``_exchange``); ``_stream`` splices a tunnel's two connections.
"""

from multiplex.execution.egress._exchange import EgressLimits, Refusal
from multiplex.execution.egress._hub import EgressHub, EgressSession, default_hub, proxy_env
from multiplex.execution.egress._netns import ProfileNetwork
from multiplex.execution.egress._policy import (
    EgressPattern,
    EgressPolicy,
    EgressVerdict,
    RefusalReason,
    address_kind,
    parse_egress_pattern,
)
from multiplex.execution.egress._proxy import EgressListener, EgressProxy

__all__ = [
    "EgressHub",
    "EgressLimits",
    "EgressListener",
    "EgressPattern",
    "EgressPolicy",
    "EgressProxy",
    "EgressSession",
    "EgressVerdict",
    "ProfileNetwork",
    "Refusal",
    "RefusalReason",
    "address_kind",
    "default_hub",
    "parse_egress_pattern",
    "proxy_env",
]
