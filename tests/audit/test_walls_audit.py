"""docs/audit.md#the-walls: each wall proved from inside the profile's real sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from multiplex import Supervisor
from multiplex.audit import run_audit
from multiplex.audit._walls import check_walls
from multiplex.execution import bwrap_status
from tests.conftest import write_home

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")


def _config(tmp_path: Path, **homes: str) -> Path:
    for name, text in homes.items():
        write_home(tmp_path / "profiles", name, text)
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\n")
    return tmp_path / "multiplex.yaml"


def test_the_walls_hold_for_the_default_and_for_an_allow_list(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        a="terminal: {sandbox: bwrap}\n",
        b="terminal:\n  sandbox: bwrap\n  egress: {allow: [pypi.org]}\n",
        closed="terminal: {sandbox: bwrap, network: 'off'}\n",
    )
    report = run_audit(config)
    assert [leak for leak in report.leaks if leak.kind == "sandbox"] == []
    assert not list((tmp_path / ".multiplex").glob(".multiplex-audit-canary-*"))
    assert not list(tmp_path.parent.glob(".multiplex-audit-sibling-*"))


def test_a_profile_on_the_hosts_network_fails_the_audit_with_a_named_finding(
    tmp_path: Path,
) -> None:
    config = _config(
        tmp_path, a="terminal: {sandbox: bwrap}\n", h="terminal: {sandbox: bwrap, network: host}\n"
    )
    report = run_audit(config)
    found = [
        (leak.profile, leak.surface, leak.detail) for leak in report.leaks if leak.kind == "sandbox"
    ]
    assert found == [("h", "egress", "a port on the host's loopback is reachable (network: host)")]


def test_a_wall_taken_down_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The defects under test: a view that shows the host, a sandbox without its floor."""
    config = _config(tmp_path, a="terminal: {sandbox: bwrap}\n")
    sup = Supervisor.from_config(config)
    try:
        clean = check_walls(sup, "a")
        assert (clean.leaks, clean.notes) == ([], [])
        import multiplex.execution.sandbox._sandbox as sandbox

        # The view of the code before the walls: the whole host, read-only.
        monkeypatch.setattr(sandbox, "runtime_binds", tuple)
        monkeypatch.setattr(sandbox, "etc_binds", tuple)
        monkeypatch.setattr(sandbox, "_BASE", ("--ro-bind", "/", "/", *sandbox._BASE))
        details = {leak.detail for leak in check_walls(sup, "a").leaks}
    finally:
        sup.close()
    assert "a canary in the supervisor's HOME is readable" in details, details


def test_another_program_connecting_to_the_canary_port_is_not_a_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a busy host, something else (a readiness poll on a reused port) may connect."""
    import socket
    import types

    import multiplex.audit._walls as walls

    strangers: list[socket.socket] = []

    def create_server(address: tuple[str, int], **kwargs: Any) -> socket.socket:
        server = socket.create_server(address, **kwargs)
        stranger = socket.create_connection(server.getsockname()[:2])
        stranger.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        strangers.append(stranger)
        return server

    # Only the audit's canary gets a stranger: the socket module itself is left alone
    # (the egress proxy and the namespaces' listeners make servers of their own).
    monkeypatch.setattr(walls, "socket", types.SimpleNamespace(create_server=create_server))
    host = _config(
        tmp_path, a="terminal: {sandbox: bwrap}\n", h="terminal: {sandbox: bwrap, network: host}\n"
    )
    sup = Supervisor.from_config(host)
    try:
        assert check_walls(sup, "a").leaks == []
        # The sandbox that does reach the port is still caught, stranger or not.
        assert [leak.detail for leak in check_walls(sup, "h").leaks] == [
            "a port on the host's loopback is reachable (network: host)"
        ]
    finally:
        sup.close()
        for stranger in strangers:
            stranger.close()
    assert len(strangers) == 2


def test_a_listener_of_the_profiles_own_namespace_on_that_port_is_not_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The profile's namespace has ports of its own (its egress proxy's entry): the same
    number there is not the host's loopback."""
    import socket
    import types

    import multiplex.audit._walls as walls
    from multiplex.execution.egress import default_hub

    config = _config(tmp_path, a="terminal: {sandbox: bwrap}\n")
    sup = Supervisor.from_config(config)
    inside: list[socket.socket] = []

    def create_server(address: tuple[str, int], **kwargs: Any) -> socket.socket:
        server = socket.create_server(address, **kwargs)
        network = default_hub().network("a", sup.profiles["a"].home)
        inside.append(network.listener(server.getsockname()[1]))
        return server

    monkeypatch.setattr(walls, "socket", types.SimpleNamespace(create_server=create_server))
    try:
        assert check_walls(sup, "a").leaks == []
    finally:
        sup.close()
        for listener in inside:
            listener.close()
    assert len(inside) == 1
