"""Two ``multiplex up`` in one folder (issue 31 item 1): each keeps its own state entry.

The first serves the port ``multiplex.yaml`` names, the second ``-p alpha --port 0``;
the CLI keeps talking to the first while the second runs and after it stops,
and a refusal says which token was sent, or that none was and where it looked.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.cli.conftest import start_up, stop_up
from tests.conftest import run_cli
from tests.gateway.conftest import make_homes

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _cli(cwd: Path, *args: str):  # type: ignore[no-untyped-def]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MULTIPLEX_")}
    return run_cli(*args, cwd=cwd, env=clean, replace_env=True)


def test_a_second_up_does_not_strand_the_first(tmp_path: Path) -> None:
    make_homes(tmp_path)
    port = _free_port()
    config = tmp_path / "multiplex.yaml"
    config.write_text(config.read_text() + f"gateway: {{port: {port}}}\n")
    first, first_url, first_token = start_up(tmp_path, "--port", str(port))
    try:
        second, second_url, second_token = start_up(tmp_path, "-p", "alpha", "--port", "0")
        try:
            assert first_token != second_token
            entries = tmp_path / ".multiplex" / "gateways"
            assert sorted(p.name for p in entries.iterdir()) == sorted(
                [str(port), second_url.rsplit(":", 1)[1]]
            )
            # The client picks the entry of the port the config names.
            whoami = _cli(tmp_path, "runs", "list", "--json")
            assert whoami.returncode == 0, whoami.stderr
            # --url of the second: its own entry's token goes with it.
            other = _cli(tmp_path, "runs", "list", "--json", "--url", second_url)
            assert other.returncode == 0, other.stderr
        finally:
            stop_up(second)
        assert (entries / str(port) / "admin-token").read_text().strip() == first_token
        assert not (entries / second_url.rsplit(":", 1)[1]).exists()
        still = _cli(tmp_path, "approvals", "list")
        assert still.returncode == 0, still.stderr
        # --token "" sends none, and says so.
        empty = _cli(tmp_path, "approvals", "list", "--token", "")
        assert empty.returncode == 2
        assert "none was sent (--token was empty)" in empty.stderr, empty.stderr
        wrong = _cli(tmp_path, "approvals", "list", "--token", "x" * 30)
        assert "refused the token from --token" in wrong.stderr
        # Outside the project folder: the default port, no entry, and where it looked.
        outside = tmp_path / "elsewhere"
        outside.mkdir()
        away = _cli(outside, "approvals", "list", "--url", first_url)
        assert away.returncode == 2
        assert "none was sent" in away.stderr and str(outside / ".multiplex") in away.stderr
        assert "refused the token" not in away.stderr
    finally:
        stop_up(first)
    assert not (tmp_path / ".multiplex" / "gateways" / str(port)).exists()


def test_several_gateways_and_none_on_the_config_port(tmp_path: Path) -> None:
    make_homes(tmp_path)
    config = tmp_path / "multiplex.yaml"
    config.write_text(config.read_text() + f"gateway: {{port: {_free_port()}}}\n")
    one, url_one, _ = start_up(tmp_path)
    try:
        alone = _cli(tmp_path, "runs", "list")  # the only live entry
        assert alone.returncode == 0, alone.stderr
        two, url_two, _ = start_up(tmp_path, "-p", "beta")
        try:
            both = _cli(tmp_path, "runs", "list")
            assert both.returncode == 2
            assert url_one in both.stderr and url_two in both.stderr and "--url" in both.stderr
        finally:
            stop_up(two)
    finally:
        stop_up(one)
