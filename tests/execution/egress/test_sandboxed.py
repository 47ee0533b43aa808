"""docs/execution.md#egress: real pip and curl inside a profile's sandbox, out only through its proxy."""

from __future__ import annotations

import sys

import pytest

from multiplex.execution import bwrap_status
from tests.execution.egress.conftest import PACKAGE, WHEEL, Origin

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")

PIP = (
    f"{sys.executable} -m pip download --no-deps --no-cache-dir --disable-pip-version-check"
    " --retries 0 --timeout 10 --index-url http://127.0.0.1:{port}/simple -d . " + PACKAGE
)


def _profile(make_home, supervisor_of, egress: str):  # type: ignore[no-untyped-def]
    make_home(
        "p",
        "terminal:\n  sandbox: bwrap\n  env: {PIP_NO_INPUT: '1', PIP_CONFIG_FILE: /dev/null}\n"
        + egress
        + "approvals:\n  mode: 'off'\n",
    )
    return supervisor_of("profiles_dir: profiles\n")


def test_pip_download_in_the_sandbox_goes_through_the_proxy(
    make_home, supervisor_of, origin: Origin
) -> None:  # type: ignore[no-untyped-def]
    sup = _profile(make_home, supervisor_of, f"  egress:\n    allow: ['127.0.0.1:{origin.port}']\n")
    done = sup.run(PIP.format(port=origin.port), profile="p", context="cron")
    assert done.exit_code == 0, done.stdout + done.stderr
    workspace = sup.profiles["p"].home / "workspace"
    assert (workspace / WHEEL).read_bytes() == (origin.root / WHEEL).read_bytes()
    # HTTPS-style tunnels work too (curl's CONNECT through https_proxy's proxy).
    tunnel = sup.run(
        f"curl -sS -m 10 -p -x $http_proxy http://127.0.0.1:{origin.port}/hello.txt",
        profile="p",
        context="cron",
    )
    assert tunnel.stdout == "hello through the proxy\n", tunnel.stderr


def test_pip_download_of_a_loopback_index_is_refused_in_the_sandbox(
    make_home, supervisor_of, origin: Origin
) -> None:  # type: ignore[no-untyped-def]
    sup = _profile(make_home, supervisor_of, "")
    done = sup.run(PIP.format(port=origin.port), profile="p", context="cron")
    assert done.exit_code != 0
    assert not list((sup.profiles["p"].home / "workspace").glob("*.whl"))
    assert f"multiplex egress: refused 127.0.0.1:{origin.port}" in done.stderr
    assert done.egress_refused
