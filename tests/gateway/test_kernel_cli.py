"""``multiplex kernel run|list|reset`` (docs/kernels.md#from-the-cli): the real CLI against a real gateway."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.conftest import run_cli
from tests.gateway.conftest import ADMIN, TOKENS, Gateway


def _cli(gateway: Gateway, *args: str, token: str = ADMIN, stdin: str | None = None):  # type: ignore[no-untyped-def]
    config = str(gateway.root / "multiplex.yaml")
    return run_cli(
        "--config", config, "--url", gateway.base, "--token", token, "kernel", *args, stdin=stdin
    )


def test_kernel_run_keeps_state_in_the_gateway(gateway: Gateway) -> None:
    first = _cli(gateway, "run", "-p", "alpha", "--session", "cli", "--", "x = 41")
    assert first.returncode == 0, first.stderr
    second = _cli(gateway, "run", "-p", "alpha", "--session", "cli", "--", "print('out'); x + 1")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "out\n42\n"
    piped = _cli(
        gateway, "run", "-p", "alpha", "--session", "cli", "--json", "--", "-", stdin="x * 2\n"
    )
    cell = json.loads(piped.stdout)
    assert cell["result"] == "82" and cell["outcome"] == "ok"
    failed = _cli(gateway, "run", "-p", "alpha", "--session", "cli", "--", "1/0")
    assert failed.returncode == 1 and "ZeroDivisionError" in failed.stderr

    listed = _cli(gateway, "list", "--json")
    (row,) = json.loads(listed.stdout)
    assert row["profile"] == "alpha" and row["session"] == "cli"
    table = _cli(gateway, "list")
    assert "alpha" in table.stdout and row["kernel_id"] in table.stdout
    # A profile token sees only its own profile's kernels, and cannot reset another's.
    assert json.loads(_cli(gateway, "list", "--json", token=TOKENS["beta"]).stdout) == []
    refused = _cli(gateway, "reset", "-p", "alpha", "--session", "cli", token=TOKENS["beta"])
    assert refused.returncode == 2 and "HTTP 404" in refused.stderr
    assert "Traceback" not in refused.stderr

    reset = _cli(gateway, "reset", "-p", "alpha", "--session", "cli")
    assert reset.returncode == 0 and "1 kernel(s) ended" in reset.stdout
    fresh = _cli(gateway, "run", "-p", "alpha", "--session", "cli", "--", "'x' in dir()")
    assert fresh.stdout == "False\n"


def test_kernel_run_without_a_gateway_runs_its_own_kernel(tmp_path: Path) -> None:
    home = tmp_path / "solo"
    home.mkdir()
    (home / "config.yaml").write_text("")
    with socket.socket() as probe:  # a port nothing listens on: no gateway is running
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "multiplex.yaml").write_text(f"profiles_dir: .\ngateway: {{port: {port}}}\n")
    result = run_cli(
        "--config",
        str(tmp_path / "multiplex.yaml"),
        "kernel",
        "run",
        "-p",
        "solo",
        "--",
        "6 * 7",
        env={"MULTIPLEX_URL": "", "MULTIPLEX_TOKEN": ""},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "42\n" and "ends with the command" in result.stderr
    listing = run_cli(
        "--config", str(tmp_path / "multiplex.yaml"), "kernel", "list", env={"MULTIPLEX_URL": ""}
    )
    assert listing.returncode == 2 and "cannot reach the gateway" in listing.stderr
