"""Cluster stores on the real test Redis, one per simulated node."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from multiplex.cluster import Cluster
from multiplex.supervision import ClusterConfig

NodeFactory = Callable[..., Cluster]


@pytest.fixture
def node(redis_url: str) -> NodeFactory:
    """``node("a", node_timeout=0.5)``: a Cluster for node ``a`` on the test Redis."""

    def make(node_id: str, **settings: float) -> Cluster:
        return Cluster(ClusterConfig(redis_url=redis_url, node_id=node_id, **settings))

    return make
