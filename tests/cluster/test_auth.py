"""A cluster's Redis with a password and the ACL user of docs/cluster.md#authentication, for real.

Each test here runs its own ``redis-server``: the documented ``ACL SETUSER``
line is read from docs/cluster.md and applied as written, two ``multiplex up``
nodes run a prompt through it, and ``ACL LOG`` must then hold no denial (a
command the code sends that the line forgets fails this test).
"""

from __future__ import annotations

import re
import secrets
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex import ConfigError
from multiplex.cluster import Cluster
from multiplex.supervision import ClusterConfig
from tests.conftest import run_cli
from tests.gateway.cluster_nodes import Node, make_cluster_homes
from tests.redis_server import RedisServer, documented_acl


@pytest.fixture
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    try:
        server = RedisServer(tmp_path_factory.mktemp("redis-auth")).start()
    except FileNotFoundError:
        pytest.skip("redis-server is not installed (make test installs it with apt-get)")
    try:
        yield server
    finally:
        server.stop()


def acl_user_url(server: RedisServer) -> tuple[str, str]:
    """Apply the documented line with a fresh password; the node URL and the password."""
    password = secrets.token_hex(12)
    server.client().execute_command(*documented_acl(password))  # type: ignore[no-untyped-call]
    server.client().acl_log_reset()
    return f"redis://multiplex:{password}@127.0.0.1:{server.port}/0", password


def node_config(tmp_path: Path, url: str, extra: str = "") -> Path:
    config = tmp_path / "multiplex.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            profiles_dir: profiles
            cluster:
              redis_url: '{url}'
              node_id: n1
            """
        )
        + extra
    )
    (tmp_path / "profiles").mkdir(exist_ok=True)
    return config


@pytest.mark.slow
def test_two_nodes_run_and_answer_a_prompt_as_the_documented_acl_user(
    own_redis: RedisServer, tmp_path: Path
) -> None:
    url, _ = acl_user_url(own_redis)
    make_cluster_homes(tmp_path)
    nodes: list[Node] = []
    try:
        a = Node(tmp_path, "a", url)
        nodes.append(a)
        b = Node(tmp_path, "b", url)
        nodes.append(b)
        assert a.ready() and b.ready()
        owner, other = a.profile["alpha"], b.profile["alpha"]
        run_id = owner.submit(["echo through the acl"], session_id="s-acl")
        pending = other.wait(run_id, "waiting_for_approval")["pending_approval"]
        assert pending is not None
        assert other.answer(run_id, pending["approval_id"], "session").status_code == 200
        done = other.wait(run_id)
        assert done["status"] == "completed", done
        assert done["results"][0]["stdout"] == "through the acl\n"
        # The session grant is shared: the same command runs on b without asking.
        again = other.submit(["echo through the acl"], session_id="s-acl")
        assert other.wait(again)["status"] == "completed"
    finally:
        for node in nodes:
            node.stop()  # leaving the cluster is part of what the user must be allowed
    denied = own_redis.client().acl_log()
    assert denied == [], denied
    keys = [str(k) for k in own_redis.client().scan_iter("*")]
    assert keys and all(k.startswith("multiplex:") for k in keys)


def test_a_wrong_password_stops_the_node_in_one_line(own_redis: RedisServer) -> None:
    url, password = acl_user_url(own_redis)
    wrong = url.replace(password, "not-the-password")
    with pytest.raises(ConfigError) as info:
        Cluster(ClusterConfig(redis_url=wrong, node_id="n1"))
    message = str(info.value)
    assert message.startswith("cluster.redis_url: redis://multiplex:***@127.0.0.1:"), message
    assert "Redis refused this node" in message and "\n" not in message
    assert "not-the-password" not in message and password not in message
    # The right one passes the same check.
    Cluster(ClusterConfig(redis_url=url, node_id="n1")).link.sync.close()


@pytest.mark.parametrize("how", ["wrong", "none-allowed"])
def test_multiplex_up_with_credentials_redis_refuses_exits_2_in_one_line(
    own_redis: RedisServer, tmp_path: Path, how: str
) -> None:
    if how == "wrong":
        config = node_config(tmp_path, own_redis.url.replace(own_redis.acl_password, "bad-secret"))
    else:  # a Redis that wants a password, reached without one
        plain = f"redis://127.0.0.1:{own_redis.port}/0"
        config = node_config(tmp_path, plain, "  allow_unauthenticated: true\n")
    result = run_cli("--config", str(config), "up", "--port", "0")
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert re.match(
        r"multiplex: error: cluster\.redis_url: redis://.*Redis refused this node", last
    )
    assert "Traceback" not in result.stderr and own_redis.acl_password not in result.stderr
    assert "bad-secret" not in result.stderr


def test_multiplex_up_refuses_a_url_without_credentials(tmp_path: Path) -> None:
    config = node_config(tmp_path, "redis://127.0.0.1:6379")
    result = run_cli("--config", str(config), "up", "--port", "0")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"multiplex: error: {config}:3: cluster.redis_url:"
        " redis://127.0.0.1:6379 has no credentials; put a password in the URL"
        " (redis://:PASSWORD@host:6379/0, or redis://USER:PASSWORD@host:6379/0 for an ACL"
        " user: docs/cluster.md#authentication) or set cluster.allow_unauthenticated: true"
    )
