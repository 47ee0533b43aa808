"""The hub's listeners outlive their commands (docs/execution.md#egress): a profile's next command
leases one its last command released, never one in use, and refusals stay with the command that
met them. Real namespaces, real sandboxed commands talking to the proxy."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex.execution import bwrap_status
from multiplex.execution.egress import EgressHub, EgressSession, default_hub
from multiplex.execution.egress._hub import _IDLE_MAX
from tests.execution.egress.test_netns import sandboxed, wait_ended

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")

ONLY_PYPI = ("pypi.org",)
# A request for a host the policy refuses, through the proxy the variables name.
ASK_REFUSED = (
    "exec 3<>/dev/tcp/127.0.0.1/${http_proxy##*:};"
    " printf 'CONNECT x.example:443 HTTP/1.1\\r\\n\\r\\n' >&3; head -c 12 <&3"
)


@pytest.fixture
def hub() -> Iterator[EgressHub]:
    hub = EgressHub()
    yield hub
    hub.close()


def _run(session: EgressSession, script: str) -> subprocess.CompletedProcess[str]:
    argv = [
        *session.enter,
        "env",
        *(f"{k}={v}" for k, v in session.env.items()),
        *sandboxed(script),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def _port(session: EgressSession) -> int:
    return int(session.env["http_proxy"].rsplit(":", 1)[1])


def _idle(hub: EgressHub, home: Path, expected: int) -> int:
    """How many idle listeners the profile has, once it is ``expected`` or after 5 s.

    A listener whose command left a connection open is offered back by the
    proxy's thread once that connection is closed: a moment after the release.
    """
    network = hub.network("a", home)
    deadline = time.monotonic() + 5
    while True:
        with hub._lock:
            count = len(hub._idle.get(network, []))
        if count == expected or time.monotonic() > deadline:
            return count
        time.sleep(0.01)


def test_the_next_command_leases_the_listener_the_last_one_released(
    hub: EgressHub, tmp_path: Path
) -> None:
    first = hub.open("a", tmp_path, ONLY_PYPI, (), tag="run-1")
    assert _run(first, ASK_REFUSED).stdout == "HTTP/1.1 403"
    first.close()
    first.close()  # idempotent
    assert _idle(hub, tmp_path, 1) == 1
    second = hub.open("a", tmp_path, ONLY_PYPI, (), tag="run-2")
    assert _port(second) == _port(first)
    assert _idle(hub, tmp_path, 0) == 0
    done = _run(second, "echo quiet")
    assert done.stdout == "quiet\n", done.stderr
    second.close()
    assert [r.tag for r in first.refusals] == ["run-1"]
    assert second.refusals == [], "the next command was told of the last one's refusal"
    third = hub.open("a", tmp_path, ONLY_PYPI, (), tag="run-3")
    assert _run(third, ASK_REFUSED).stdout == "HTTP/1.1 403"
    third.close()
    assert [r.tag for r in third.refusals] == ["run-3"]
    assert [r.tag for r in first.refusals] == ["run-1"] and second.refusals == []


def test_commands_at_once_each_hold_their_own_listener(hub: EgressHub, tmp_path: Path) -> None:
    sessions = [hub.open("a", tmp_path, ONLY_PYPI, (), tag=f"run-{i}") for i in range(4)]
    assert len({_port(s) for s in sessions}) == 4
    results: dict[int, subprocess.CompletedProcess[str]] = {}

    def one(index: int) -> None:
        script = ASK_REFUSED if index % 2 else "echo quiet"
        results[index] = _run(sessions[index], script)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for session in sessions:
        session.close()
    assert [results[i].stdout for i in range(4)] == ["quiet\n", "HTTP/1.1 403"] * 2
    assert [[r.tag for r in s.refusals] for s in sessions] == [[], ["run-1"], [], ["run-3"]]
    assert _idle(hub, tmp_path, 4) == 4


def test_idle_listeners_are_bounded_per_profile(hub: EgressHub, tmp_path: Path) -> None:
    sessions = [hub.open("a", tmp_path, (), (), tag=i) for i in range(_IDLE_MAX + 3)]
    for session in sessions:
        session.close()
    assert _idle(hub, tmp_path, _IDLE_MAX) == _IDLE_MAX


def test_a_forgotten_profile_stops_its_idle_listeners(hub: EgressHub, tmp_path: Path) -> None:
    session = hub.open("a", tmp_path, ONLY_PYPI, (), tag="run-1")
    session.close()
    assert _idle(hub, tmp_path, 1) == 1
    idle = hub._idle[hub.network("a", tmp_path)][0]
    hub.forget(tmp_path)
    assert idle.open_connections == 0 and idle._stopped
    fresh = hub.open("a", tmp_path, ONLY_PYPI, (), tag="run-2")
    try:
        assert _run(fresh, ASK_REFUSED).stdout == "HTTP/1.1 403"
    finally:
        fresh.close()
    assert [r.tag for r in fresh.refusals] == ["run-2"]


def test_a_listener_released_after_its_profile_was_forgotten_is_stopped(
    hub: EgressHub, tmp_path: Path
) -> None:
    session = hub.open("a", tmp_path, ONLY_PYPI, (), tag="run-1")
    listener = hub._proxy._listeners.copy().pop()
    hub.forget(tmp_path)
    session.close()
    assert listener._stopped
    assert not hub._idle


def test_a_profile_removed_by_a_reload_ends_its_namespace_and_idle_listeners(
    make_home, supervisor_of, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    for name in ("a", "b"):
        make_home(
            name,
            "terminal:\n  sandbox: bwrap\n  network: 'on'\n  egress:\n    allow: [pypi.org]\n"
            "approvals:\n  mode: 'off'\n",
        )
    sup = supervisor_of("profiles_dir: profiles\nprofiles: [a, b]\n")
    hub = default_hub()
    # Two commands of "a" at once (two listeners kept), one of "b".
    both = [
        threading.Thread(
            target=sup.run, args=("sleep 0.3",), kwargs={"profile": "a", "context": "cron"}
        )
        for _ in range(2)
    ]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join(30)
    assert sup.run("echo $http_proxy", profile="b", context="cron").exit_code == 0
    homes = {name: sup.profiles[name].home for name in ("a", "b")}
    networks = {name: hub.network(name, home) for name, home in homes.items()}
    assert _idle(hub, homes["a"], 2) == 2 and _idle(hub, homes["b"], 1) == 1
    # A command of "a" still running across the reload keeps its own listener and the
    # namespace (its start may come after the reload: the holder must still be there).
    running: list[object] = []
    late = threading.Thread(
        target=lambda: running.append(
            sup.run("sleep 1; " + ASK_REFUSED, profile="a", context="cron")
        )
    )
    late.start()
    assert _idle(hub, homes["a"], 1) == 1  # one leased by it, one idle
    with hub._lock:
        held = list(hub._idle[networks["a"]])
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\nprofiles: [b]\n")
    assert sup.reload_config().removed == ("a",)
    assert all(listener._stopped for listener in held)
    assert networks["a"].alive  # the running command holds a lease in it
    with hub._lock:
        assert networks["a"] not in hub._idle
    assert networks["b"].alive and _idle(hub, homes["b"], 1) == 1  # the other profile's stay
    late.join(30)
    assert running and running[0].stdout == "HTTP/1.1 403", running  # type: ignore[attr-defined]
    assert wait_ended(networks["a"].pid)  # with the last lease
    with hub._lock:
        assert networks["a"] not in hub._idle  # its listener, released, was not kept
        assert networks["a"] not in hub._leased and networks["a"] not in hub._retiring
    done = sup.run("echo $http_proxy", profile="b", context="cron")
    assert done.exit_code == 0 and done.stdout.startswith("http://127.0.0.1:")
