"""Two and three real nodes sharing one Redis and one profiles folder (docs/cluster.md).

A module-scoped cluster of three ``multiplex up`` processes: ``a`` and ``c``
watch the files by polling, ``b`` does not watch at all (a shared folder that
delivers no events, like NFS), so what ``b`` learns of an edit it learns from
the reload signal alone.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.cluster_nodes import SECRET, Node, make_cluster_homes
from tests.gateway.conftest import ADMIN, TOKENS, Api, SseReader

pytestmark = pytest.mark.slow


class Trio:
    def __init__(self, root: Path, nodes: dict[str, Node], redis: Any) -> None:
        self.root = root
        self.a, self.b, self.c = nodes["a"], nodes["b"], nodes["c"]
        self.nodes = nodes
        self.redis = redis


@pytest.fixture(scope="module")
def trio(redis_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trio]:
    if redis_server.proc is None:
        redis_server.start()
    redis_server.flush()
    root = tmp_path_factory.mktemp("trio")
    make_cluster_homes(root)
    nodes: dict[str, Node] = {}
    try:
        for name, watch in (("a", "polling"), ("b", "off"), ("c", "polling")):
            nodes[name] = Node(root, name, redis_server.url, watch=watch)
        yield Trio(root, nodes, redis_server)
    finally:
        for node in nodes.values():
            node.stop()


@contextlib.contextmanager
def _events(node: Node, token: str = ADMIN, **headers: str) -> Iterator[SseReader]:
    """``/v1/events`` of ``node`` as ``token`` (extra headers: ``Last-Event-ID``)."""
    auth = {"Authorization": f"Bearer {token}", **headers}
    with (
        httpx.Client(base_url=node.base, headers=auth) as client,
        client.stream("GET", "/v1/events", timeout=30) as response,
    ):
        yield SseReader(response)


def _pending(api: Api, run_id: str, timeout: float = 15.0) -> dict[str, Any]:
    data = api.wait(run_id, "waiting_for_approval", timeout=timeout)
    assert data["pending_approval"] is not None, data
    pending: dict[str, Any] = data["pending_approval"]
    return pending


def test_a_run_created_on_a_is_seen_answered_and_finished_through_b(trio: Trio) -> None:
    a, b, c = trio.a.profile["alpha"], trio.b.profile["alpha"], trio.c.admin
    run_id = a.submit(["echo across", "true"], session_id="s-across")
    pending = _pending(b, run_id)  # B polls a run it never executed
    listed = [r for r in c.get("/v1/approvals").json() if r["run_id"] == run_id]
    assert [r["approval_id"] for r in listed] == [pending["approval_id"]]
    assert listed[0]["command"] == "echo across" and listed[0]["profile"] == "alpha"
    assert b.answer(run_id, pending["approval_id"], "once").status_code == 200
    second = c.answer(run_id, pending["approval_id"], "once")
    assert second.status_code == 409 and "already resolved" in second.json()["detail"]
    done = b.wait(run_id)
    assert done["status"] == "completed"
    assert [r["stdout"] for r in done["results"]] == ["across\n", ""]
    assert done["results"][0]["decision"]["decided_by"] == "user"
    assert a.run(run_id) == done  # the same document on its own node
    assert not [r for r in c.get("/v1/approvals").json() if r["run_id"] == run_id]


def test_other_profiles_runs_stay_hidden_on_every_node(trio: Trio) -> None:
    run_id = trio.a.profile["alpha"].submit(["true"])
    trio.a.profile["alpha"].wait(run_id)
    assert trio.b.profile["beta"].get(f"/v1/runs/{run_id}").status_code == 404
    assert trio.b.admin.get(f"/v1/runs/{run_id}").status_code == 200
    assert trio.c.profile["alpha"].get("/v1/runs/run-nope").status_code == 404


def test_fifty_concurrent_answers_over_three_nodes_resolve_once(trio: Trio) -> None:
    owner = trio.a.profile["alpha"]
    run_id = owner.submit(["echo race"], session_id="s-race")
    approval_id = _pending(owner, run_id)["approval_id"]
    apis = [trio.a.admin, trio.b.admin, trio.c.admin]
    barrier = threading.Barrier(50)
    codes: list[int] = [0] * 50

    def answer(i: int) -> None:
        api = apis[i % 3]
        with httpx.Client(base_url=api.base, headers={"Authorization": f"Bearer {ADMIN}"}) as cl:
            barrier.wait()
            body = {"approval_id": approval_id, "choice": "once"}
            codes[i] = cl.post(f"/v1/runs/{run_id}/approval", json=body, timeout=120).status_code

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200] + [409] * 49, codes
    done = owner.wait(run_id)
    assert done["status"] == "completed" and done["results"][0]["stdout"] == "race\n"


def test_events_of_every_node_reach_a_stream_on_any_node(trio: Trio) -> None:
    with _events(trio.c) as stream:
        stream.connected()
        run_id = trio.a.profile["alpha"].submit(["echo events"], session_id="s-ev")
        _, asked = stream.until(lambda n, d: n == "approval.request" and d["run_id"] == run_id)
        assert asked["command"] == "echo events"
        # A stream opened later on B re-sends the open request.
        with _events(trio.b, TOKENS["alpha"]) as head:
            _, data = head.until(lambda n, d: n == "approval.request")
            while data["approval_id"] != asked["approval_id"]:
                _, data = head.until(lambda n, d: n == "approval.request")
        assert trio.b.admin.answer(run_id, asked["approval_id"], "once").status_code == 200
        names = stream.run_events(run_id)
    assert names == ["approval.resolved", "command.finished", "run.finished"]


def test_cancelling_on_b_a_run_parked_on_a(trio: Trio) -> None:
    run_id = trio.a.profile["alpha"].submit(["echo cancel-me", "true"])
    _pending(trio.a.profile["alpha"], run_id)
    r = trio.b.profile["alpha"].post(f"/v1/runs/{run_id}/cancel")
    assert r.status_code == 200 and r.json()["cancelled"] == 1
    done = trio.c.admin.wait(run_id)
    assert done["status"] == "cancelled"
    assert done["results"][0]["decision"]["cause"] == "run cancelled"


def test_a_session_grant_on_one_node_holds_on_another(trio: Trio) -> None:
    a, c = trio.a.profile["alpha"], trio.c.profile["alpha"]
    first = a.submit(["echo granted"], session_id="s-grant")
    approval_id = _pending(a, first)["approval_id"]
    assert trio.b.admin.answer(first, approval_id, "session").status_code == 200
    assert a.wait(first)["status"] == "completed"
    again = c.submit(["echo granted"], session_id="s-grant")  # on C: no prompt
    done = c.wait(again)
    assert done["status"] == "completed"
    assert done["results"][0]["decision"]["decided_by"] == "rule"
    elsewhere = c.submit(["echo granted"], session_id="s-other")  # another session asks
    _pending(c, elsewhere)
    trio.c.admin.post(f"/v1/runs/{elsewhere}/cancel")


def test_a_session_reset_on_b_cancels_waits_on_a_and_c(trio: Trio) -> None:
    on_a = trio.a.profile["alpha"].submit(["echo reset-a"], session_id="s-reset")
    on_c = trio.c.profile["alpha"].submit(["echo reset-c"], session_id="s-reset")
    _pending(trio.a.profile["alpha"], on_a)
    _pending(trio.c.profile["alpha"], on_c)
    r = trio.b.admin.post("/v1/sessions/alpha/s-reset/reset")
    assert r.status_code == 200 and r.json()["cancelled"] == 2
    for run_id in (on_a, on_c):
        done = trio.b.admin.wait(run_id)
        assert done["status"] == "cancelled"
        assert done["results"][0]["decision"]["cause"] == "session reset"


def _verdict(node: Node, command: str) -> str:
    body = {"profile": "alpha", "command": command}
    return str(node.admin.post("/v1/approvals/test", json=body).json()["outcome"])


def _until(check: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "did not converge"
        time.sleep(0.02)


def test_a_hand_revocation_reaches_a_node_that_does_not_watch(trio: Trio) -> None:
    config = trio.root / "profiles" / "alpha" / "config.yaml"
    original = config.read_text()
    assert _verdict(trio.b, "printf revoke-me") == "approved"
    config.write_text(original.replace(', "printf *"', ""))
    try:
        # b never watches: only a's (or c's) reload signal can tell it.
        _until(lambda: _verdict(trio.b, "printf revoke-me") != "approved")
    finally:
        config.write_text(original)
    _until(lambda: _verdict(trio.b, "printf revoke-me") == "approved")


def test_an_always_answer_on_a_reaches_b(trio: Trio) -> None:
    a = trio.a.profile["alpha"]
    assert _verdict(trio.b, "echo always-rule") != "approved"
    run_id = a.submit(["echo always-rule"])
    approval_id = _pending(a, run_id)["approval_id"]
    assert trio.c.admin.answer(run_id, approval_id, "always").status_code == 200
    assert a.wait(run_id)["status"] == "completed"
    _until(lambda: _verdict(trio.b, "echo always-rule") == "approved")


def _self_approves(node: Node, name: str) -> bool:
    settings = node.admin.get(f"/v1/profiles/{name}").json()["settings"]
    return bool(settings["approvals"]["self_approve"])


def test_self_approve_false_refuses_the_profiles_own_token_on_every_node(trio: Trio) -> None:
    config = trio.root / "profiles" / "beta" / "config.yaml"
    original = config.read_text()
    config.write_text(original.replace("mode: strict", "mode: strict\n  self_approve: false"))
    try:
        _until(lambda: not any(_self_approves(n, "beta") for n in trio.nodes.values()))
        owner = trio.a.profile["beta"]
        run_id = owner.submit(["echo needs-the-admin"], session_id="s-self")
        approval_id = _pending(owner, run_id)["approval_id"]
        for node in (trio.a, trio.b):  # the run's own node, and another
            for choice in ("once", "deny"):
                refused = node.profile["beta"].answer(run_id, approval_id, choice)
                assert refused.status_code == 403 and "self_approve" in refused.text
        assert owner.run(run_id)["status"] == "waiting_for_approval"
        assert trio.c.admin.answer(run_id, approval_id, "once").status_code == 200
        done = owner.wait(run_id)
        assert done["status"] == "completed"
        assert done["results"][0]["decision"]["decided_by"] == "user"
    finally:
        config.write_text(original)
    _until(lambda: all(_self_approves(n, "beta") for n in trio.nodes.values()))


def test_an_answer_for_another_run_or_profile_is_refused_on_every_node(trio: Trio) -> None:
    owner = trio.a.profile["alpha"]
    run_id = owner.submit(["echo mine-alone"], session_id="s-mismatch")
    approval_id = _pending(owner, run_id)["approval_id"]
    other = owner.submit(["true"], session_id="s-mismatch-2")
    owner.wait(other)
    for node in (trio.a, trio.b):
        wrong_run = node.admin.answer(other, approval_id, "once")
        assert wrong_run.status_code == 409 and "not open for this run" in wrong_run.text
        assert node.profile["beta"].answer(run_id, approval_id, "once").status_code == 404
        unknown = node.admin.answer(run_id, "ap-nope", "once")
        assert unknown.status_code == 409 and "not open for this run" in unknown.text
    assert owner.run(run_id)["status"] == "waiting_for_approval"
    assert trio.b.profile["alpha"].answer(run_id, approval_id, "once").status_code == 200
    assert owner.wait(run_id)["status"] == "completed"


def _everything(client: Any) -> str:
    parts: list[str] = []
    for key in client.scan_iter("*"):
        kind = client.type(key)
        parts.append(key)
        if kind == "string":
            parts.append(client.get(key))
        elif kind == "hash":
            parts.append(json.dumps(client.hgetall(key)))
        elif kind == "set":
            parts.extend(client.smembers(key))
        elif kind == "zset":
            parts.extend(client.zrange(key, 0, -1))
        elif kind == "stream":
            parts.extend(json.dumps(fields) for _id, fields in client.xrange(key))
    return "\n".join(parts)


def test_no_token_or_secret_is_stored_in_redis(trio: Trio) -> None:
    a = trio.a.profile["alpha"]
    leaky = f"echo ok {SECRET} {TOKENS['alpha']}"
    run_id = a.submit([leaky, f"echo ask {SECRET}"], session_id="s-secret")
    pending = _pending(a, run_id)
    assert SECRET not in pending["command"]
    denied = trio.b.admin.answer(run_id, pending["approval_id"], "deny", reason=SECRET)
    assert denied.status_code == 200
    assert a.wait(run_id)["status"] == "failed"
    remote = trio.c.admin.run(run_id)  # another node shows the stored, redacted document
    assert remote["results"][0]["stdout"].startswith("ok [REDACTED")
    assert SECRET not in json.dumps(remote) and TOKENS["alpha"] not in json.dumps(remote)
    stored = _everything(trio.redis.client())
    assert "alpha" in stored and "s-secret" in stored  # the records are there
    for value in (SECRET, ADMIN, *TOKENS.values()):
        assert value not in stored


def test_a_runs_own_stream_on_another_node_resends_its_prompt_then_follows_it(
    trio: Trio,
) -> None:
    a = trio.a.profile["alpha"]
    run_id = a.submit(["echo follow-me"], session_id="s-follow")
    approval_id = _pending(a, run_id)["approval_id"]
    headers = {"Authorization": f"Bearer {TOKENS['alpha']}"}
    with (
        httpx.Client(base_url=trio.b.base, headers=headers) as cl,
        cl.stream("GET", f"/v1/runs/{run_id}/events", timeout=30) as response,
    ):
        stream = SseReader(response)
        name, data = stream.until(lambda n, d: True)
        assert (name, data["approval_id"], data["command"]) == (
            "approval.request",
            approval_id,
            "echo follow-me",
        )
        assert trio.c.admin.answer(run_id, approval_id, "once").status_code == 200
        names = [name]
        while names[-1] != "run.finished":  # its lifecycle; command.output as it writes
            names.append(stream.until(lambda n, d: n != "command.output")[0])
    assert names == ["approval.request", "approval.resolved", "command.finished", "run.finished"]
    assert trio.b.profile["beta"].get(f"/v1/runs/{run_id}/events").status_code == 404


def test_an_identical_prompt_on_b_follows_the_one_open_on_a(trio: Trio) -> None:
    """docs/cluster.md#approvals: one question for the human, whichever node asked first."""
    a, b, c = trio.a.admin, trio.b.admin, trio.c.admin
    first = a.submit(["echo coalesced"], profile="alpha", session_id="s-coalesce")
    leader = _pending(a, first)
    second = b.submit(["echo coalesced"], profile="alpha", session_id="s-coalesce")
    follows = _pending(b, second)
    assert follows["approval_id"] == leader["approval_id"]  # b shows a's prompt
    listed = [r for r in c.get("/v1/approvals").json() if r["session_id"] == "s-coalesce"]
    assert [r["approval_id"] for r in listed] == [leader["approval_id"]]  # asked once
    # Answered through b's run: both runs go on, each on its own node.
    assert b.answer(second, follows["approval_id"], "once").status_code == 200
    for api, run_id in ((a, first), (b, second)):
        done = api.wait(run_id)
        assert done["status"] == "completed", done
        assert done["results"][0]["stdout"] == "coalesced\n"
    # Another session is never coalesced with it.
    other = c.submit(["echo coalesced"], profile="alpha", session_id="s-coalesce-2")
    assert _pending(c, other)["approval_id"] != leader["approval_id"]
    assert c.post(f"/v1/runs/{other}/cancel").status_code == 200


def test_a_cancelled_leader_on_a_cancels_its_follower_on_b(trio: Trio) -> None:
    a, b = trio.a.admin, trio.b.admin
    first = a.submit(["echo withdrawn"], profile="alpha", session_id="s-co-cancel")
    leader = _pending(a, first)
    second = b.submit(["echo withdrawn"], profile="alpha", session_id="s-co-cancel")
    assert _pending(b, second)["approval_id"] == leader["approval_id"]
    assert a.post(f"/v1/runs/{first}/cancel").status_code == 200
    done = b.wait(second)
    assert done["status"] == "cancelled" and done["results"][0]["exit_code"] is None


def test_a_stream_resumed_on_another_node_gets_what_it_missed(trio: Trio) -> None:
    """docs/gateway.md#server-sent-events: every event carries its stream position as the SSE id; a
    client that reconnects anywhere with Last-Event-ID gets the events it missed, in order."""
    with _events(trio.b) as stream:
        stream.connected()
        seen = trio.a.admin.submit(["echo ok before"], profile="delta")
        stream.until(lambda n, d: n == "run.finished" and d["run_id"] == seen)
        last = stream.last_id
    assert last is not None and "-" in last
    missed = trio.a.admin.submit(["echo ok away"], profile="delta")  # nobody streams it
    assert trio.a.admin.wait(missed)["status"] == "completed"
    with _events(trio.c, **{"Last-Event-ID": last}) as resumed:
        names = resumed.run_events(missed)
    assert names == ["run.started", "command.finished", "run.finished"]
    # A profile token's replay holds only its own profile's events.
    with _events(trio.c, TOKENS["alpha"], **{"Last-Event-ID": last}) as own:
        own.connected()
        marker = trio.a.profile["alpha"].submit(["echo mine"], session_id="s-replay")
        own.until(lambda n, d: d.get("run_id") == marker)
        assert not [d for _, d in own.seen if d.get("profile") == "delta"]
    assert trio.a.admin.post(f"/v1/runs/{marker}/cancel").status_code == 200


def test_a_node_that_stopped_reading_the_stream_follows_it_again_for_a_new_stream(
    trio: Trio,
) -> None:
    """docs/cluster.md#events: a node reads other nodes' events only while a stream of its
    own follows them; what it skipped meanwhile is still replayed from the shared stream."""
    a, delta = trio.a.admin, {"profile": "delta"}
    with _events(trio.b) as first:
        first.connected()
        seen = a.submit(["echo ok one"], **delta)
        first.until(lambda n, d: n == "run.finished" and d["run_id"] == seen)
        last = first.last_id
    assert last is not None
    # Nobody streams from b now: b reads nothing, and a's next run still goes to the stream.
    missed = a.submit(["echo ok two"], **delta)
    assert a.wait(missed)["status"] == "completed"
    with _events(trio.b, **{"Last-Event-ID": last}) as again:
        assert again.run_events(missed) == ["run.started", "command.finished", "run.finished"]
        live = a.submit(["echo ok three"], **delta)  # then live, through b's reader again
        assert again.run_events(live) == ["run.started", "command.finished", "run.finished"]
    with _events(trio.b) as fresh:  # no Last-Event-ID: everything from ": connected" on
        fresh.connected()
        after = a.submit(["echo ok four"], **delta)
        assert fresh.run_events(after) == ["run.started", "command.finished", "run.finished"]
        assert fresh.last_id is not None and "-" in fresh.last_id


def test_a_runs_events_are_in_the_stream_once_each_and_in_order(trio: Trio) -> None:
    # The prompt's approval.request is appended by the script that registers it
    # (docs/cluster.md#cost): after the command that ran before it, never twice,
    # and with the run's document saying what it waits for.
    a = trio.a.profile["alpha"]
    with _events(trio.a, TOKENS["alpha"]) as local:
        local.connected()
        run_id = a.submit(["echo ok first", "echo ask second"], session_id="s-order")
        pending = _pending(trio.b.profile["alpha"], run_id)
        _, asked = local.until(lambda n, d: n == "approval.request")
        position = local.last_id
        assert asked["approval_id"] == pending["approval_id"]
        assert trio.c.admin.answer(run_id, pending["approval_id"], "once").status_code == 200
        assert a.wait(run_id)["status"] == "completed"
    # The document says completed a moment before its last events are in the stream (they
    # are appended by the node's publisher): read once run.finished is there.
    deadline = time.monotonic() + 10
    while True:
        entries = [
            (str(entry_id), fields)
            for entry_id, fields in trio.redis.client().xrange("multiplex:events")
            if fields["run"] == run_id and fields["name"] != "command.output"  # its lifecycle
        ]
        names = [fields["name"] for _, fields in entries]
        if "run.finished" in names or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert names == [
        "run.started",
        "command.finished",
        "approval.request",
        "approval.resolved",
        "command.finished",
        "run.finished",
    ]
    (request_id,) = [i for i, f in entries if f["name"] == "approval.request"]
    assert position == request_id  # the local stream carries the same position
    stored = json.loads(entries[2][1]["data"])
    assert (
        stored["approval_id"] == pending["approval_id"] and stored["command"] == "echo ask second"
    )
    assert all(f["node"] == "a" for _, f in entries)


def _framed(response: httpx.Response) -> Iterator[tuple[str | None, str, dict[str, Any]]]:
    """``(id, name, data)`` of each event frame (``id`` None for a frame without one)."""
    position: str | None = None
    name = ""
    for line in response.iter_lines():
        if line.startswith("id: "):
            position = line[4:]
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield position, name, json.loads(line[6:])
        elif not line:
            position, name = None, ""


def _order(position: str) -> tuple[int, int]:
    ms, _, seq = position.partition("-")
    return int(ms), int(seq)


def test_a_stream_is_sent_every_nodes_events_in_stream_order_and_resumes_without_a_gap(
    trio: Trio,
) -> None:
    """docs/cluster.md#events: a stream that follows the cluster gets its own node's events
    from the shared stream too, so the positions it is sent only grow, whichever node made
    an event or answered a prompt; a client resuming from any of them misses nothing."""
    runs: list[str] = []
    failed: list[BaseException] = []
    lock = threading.Lock()

    def plain(name: str) -> None:  # runs on every node at once
        try:
            for i in range(6):
                run_id = trio.nodes[name].admin.submit([f"echo ok {name}-{i}"], profile="delta")
                with lock:
                    runs.append(run_id)
        except BaseException as exc:
            failed.append(exc)

    def asked(name: str) -> None:  # a's prompts, answered on another node
        answerer = trio.nodes[name].admin
        try:
            for i in range(3):
                run_id = trio.a.profile["alpha"].submit([f"echo order-{name}-{i}"])
                with lock:
                    runs.append(run_id)
                approval_id = _pending(answerer, run_id)["approval_id"]
                assert answerer.answer(run_id, approval_id, "once").status_code == 200
        except BaseException as exc:
            failed.append(exc)

    auth = {"Authorization": f"Bearer {ADMIN}"}
    seen: list[tuple[str, str, dict[str, Any]]] = []
    with (
        httpx.Client(base_url=trio.a.base, headers=auth) as client,
        client.stream("GET", "/v1/events", timeout=30) as response,
    ):
        frames = _framed(response)
        workers = [threading.Thread(target=plain, args=(n,)) for n in "abc"]
        workers += [threading.Thread(target=asked, args=(n,)) for n in "bc"]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not failed, failed
        assert len(runs) == 24
        finished: set[str] = set()
        while not set(runs) <= finished:
            position, name, data = next(frames)
            if position is None:  # an open prompt re-sent on connect
                continue
            seen.append((position, name, data))
            if name == "run.finished":
                finished.add(data["run_id"])
    positions = [p for p, _, _ in seen]
    assert len(positions) == len(set(positions))
    assert [_order(p) for p in positions] == sorted(_order(p) for p in positions)
    resolved = [d["run_id"] for _, n, d in seen if n == "approval.resolved"]
    assert len(set(resolved) & set(runs)) == 6  # every answer, in its place
    # Resumed on another node from the middle: exactly what came after, in the same order.
    cut = len(seen) // 2
    with (
        httpx.Client(base_url=trio.c.base, headers={**auth, "Last-Event-ID": positions[cut]}) as c,
        c.stream("GET", "/v1/events", timeout=30) as resumed,
    ):
        again: list[str] = []
        for position, _name, _data in _framed(resumed):
            if position is None:
                continue
            again.append(position)
            if position == positions[-1]:
                break
    assert again == positions[cut + 1 :]
