"""A broken edit of a served profile (issue 31 item 8): its last good config keeps
serving, and ``profiles list``, ``/readyz`` and the banner say so."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.cli.conftest import start_up, stop_up
from tests.conftest import run_cli
from tests.gateway.conftest import Api, make_homes

pytestmark = pytest.mark.slow


def _cli(cwd: Path, *args: str):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MULTIPLEX_")}
    return run_cli(*args, cwd=cwd, env=env, replace_env=True)


def _readyz(admin: Api, want: bool) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + 60  # the watcher polls; bounded, not a timing claim
    while True:
        body: dict = admin.get("/readyz").json()  # type: ignore[type-arg]
        names = [p["profile"] for p in body["serving_last_good_profiles"]]
        if ("alpha" in names) == want:
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def test_a_broken_edit_serves_the_last_good_config_and_says_so(tmp_path: Path) -> None:
    homes = make_homes(tmp_path)
    proc, url, token = start_up(tmp_path)
    banner = ""
    try:
        admin = Api(url, token)
        assert _readyz(admin, want=False)["serving_last_good"] == 0
        config = homes["alpha"] / "config.yaml"
        good = config.read_text()
        config.write_text(good.replace("mode: strict", "mode: bogus"))
        body = _readyz(admin, want=True)
        assert body["serving_last_good"] == 1 and body["ready"] is True
        [row] = [p for p in body["serving_last_good_profiles"] if p["profile"] == "alpha"]
        assert row["since"] <= time.time()
        assert Api(url, None).get("/readyz").json().get("serving_last_good_profiles") is None
        # docs/configuration.md#validation: still routable, with the last good settings.
        ran = _cli(tmp_path, "run", "-p", "alpha", "--", "printf", "still-served")
        assert (ran.returncode, ran.stdout) == (0, "still-served"), ran.stderr
        listed = _cli(tmp_path, "profiles", "list")
        assert listed.returncode == 1  # a broken file is still an error
        assert "alpha: serving the last good config since" in listed.stdout, listed.stdout
        served = admin.get("/v1/profiles/alpha").json()
        assert served["status"] == "error" and served["serving_last_good_since"] == row["since"]
        config.write_text(good)
        _readyz(admin, want=False)
        assert "serving the last good" not in _cli(tmp_path, "profiles", "list").stdout
    finally:
        banner = stop_up(proc)
    # The banner named the profile that was broken from the start (never served).
    assert "profile broken: not served: " in banner, banner[-2000:]
