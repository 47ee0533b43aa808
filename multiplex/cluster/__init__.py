"""Several ``multiplex up`` nodes as one service, through a shared Redis (docs/cluster.md).

``_link`` holds the clients and the node's view of Redis health; ``_runs`` the
run records; ``_approvals`` open prompts and their single resolution;
``_events`` the shared event stream; ``_sessions`` session grants and yolo;
``_signals`` pub/sub between nodes; ``_nodes`` heartbeats and lost nodes;
``_handoff`` parked runs moving from a stopping node to another;
``_publish`` a batch of events with the run documents they change, one script;
``_cluster`` ties them to one node's event loop. Absent ``cluster:`` in
``multiplex.yaml``, nothing here is imported or started.
"""

from multiplex.cluster._approvals import (
    Announcement,
    ApprovalStore,
    Claim,
    Outcome,
    resolution_doc,
    resolution_of,
)
from multiplex.cluster._cluster import Cluster
from multiplex.cluster._events import EventLog, SharedEvent, encode
from multiplex.cluster._handoff import HANDOFF_OWNER, HandOff, HandOffQueue
from multiplex.cluster._link import CLOSE_SECONDS, PREFIX, ClusterUnavailable, RedisLink
from multiplex.cluster._nodes import LostNode, NodeRegistry
from multiplex.cluster._publish import Inline, Outgoing, Publisher
from multiplex.cluster._runs import NODE_LOST, RunStore
from multiplex.cluster._sessions import SharedSessionTable
from multiplex.cluster._signals import CANCEL_CHANNEL, RELOAD_CHANNEL, Signals

__all__ = [
    "CANCEL_CHANNEL",
    "CLOSE_SECONDS",
    "HANDOFF_OWNER",
    "NODE_LOST",
    "PREFIX",
    "RELOAD_CHANNEL",
    "Announcement",
    "ApprovalStore",
    "Claim",
    "Cluster",
    "ClusterUnavailable",
    "EventLog",
    "HandOff",
    "HandOffQueue",
    "Inline",
    "LostNode",
    "NodeRegistry",
    "Outcome",
    "Outgoing",
    "Publisher",
    "RedisLink",
    "RunStore",
    "SharedEvent",
    "SharedSessionTable",
    "Signals",
    "encode",
    "resolution_doc",
    "resolution_of",
]
