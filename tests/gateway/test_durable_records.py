"""docs/security.md#durable-records over real HTTP: a full disk and a kill -9.

- an "always" answer acknowledged with 200 has its rule in config.yaml AND an
  answer record (who, choice, rule) in decisions.jsonl, even when the gateway
  is killed with SIGKILL right after the 200 (a real ``multiplex up``);
- on a full disk (a real tmpfs) a run is refused with the cause, the profile is
  degraded in /readyz and /v1/profiles (the dashboard's table), and an
  "always" answer is refused with 507 while the prompt stays open.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from multiplex.profiles import read_allowlist
from tests.gateway.conftest import ADMIN, TOKENS, Api, Gateway, make_homes, start_up
from tests.tmpfs import fill, mounted_tmpfs

CAUSE = "cannot record the decision: No space left on device"


def _records(home: Path) -> list[dict[str, Any]]:
    path = home / "logs/decisions.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.mark.slow
def test_always_answers_acknowledged_before_a_kill_9_are_all_on_disk(tmp_path: Path) -> None:
    homes = make_homes(tmp_path)
    up = start_up(tmp_path)
    proc, api = up.proc, up.api
    try:
        parked = [api.parked([f"echo kept-{n}"], profile="alpha") for n in range(6)]

        def answer(item: tuple[str, dict[str, Any]]) -> int:
            run_id, pending = item
            return api.answer(run_id, pending["approval_id"], "always").status_code

        with concurrent.futures.ThreadPoolExecutor(len(parked)) as pool:
            codes = list(pool.map(answer, parked))
        os.kill(proc.pid, signal.SIGKILL)  # right after the last 200 OK
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert codes == [200] * len(parked)
    rules = read_allowlist(homes["alpha"] / "config.yaml")
    answers = {r["rule"]: r for r in _records(homes["alpha"]) if r.get("kind") == "answer"}
    for n, (_, pending) in enumerate(parked):
        rule = f"echo kept-{n}"
        assert rule in rules
        record = answers[rule]
        assert (record["choice"], record["by"], record["answered_by"]) == (
            "always",
            "admin",
            "admin",
        )
        assert record["approval_id"] == pending["approval_id"]


@pytest.fixture
def full_gateway(tmp_path: Path) -> Iterator[Gateway]:
    """The usual gateway, its homes and config on a 512 KiB tmpfs."""
    with mounted_tmpfs(tmp_path / "disk", "512k") as disk:
        homes = make_homes(disk)
        sup = Supervisor.from_config(disk / "multiplex.yaml")
        sup.start()
        server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0).start()
        base = server.url.rstrip("/")
        gw = Gateway(
            server=server,
            sup=sup,
            root=disk,
            homes=homes,
            admin=Api(base, ADMIN),
            profile={name: Api(base, token) for name, token in TOKENS.items()},
            anonymous=Api(base, None),
        )
        try:
            yield gw
        finally:
            server.stop()
            sup.close()


def test_a_full_disk_refuses_runs_and_shows_the_profile_degraded(full_gateway: Gateway) -> None:
    gw = full_gateway
    api = gw.admin
    done = api.wait(api.submit(["true"], profile="alpha"))
    assert done["results"][0]["decision"]["outcome"] == "approved"
    ballast = fill(gw.root, gw.homes["alpha"])

    done = api.wait(api.submit(["true"], profile="alpha"))
    decision = done["results"][0]["decision"]
    assert (decision["outcome"], decision["decided_by"], decision["cause"]) == (
        "blocked",
        "policy",
        CAUSE,
    )
    assert done["results"][0]["exit_code"] is None

    ready = gw.anonymous.get("/readyz")
    assert ready.status_code == 503 and ready.json()["degraded"] == 1
    assert "degraded_profiles" not in ready.json()  # no names for anonymous callers
    named = api.get("/readyz").json()
    assert named["degraded_profiles"] == [{"profile": "alpha", "cause": CAUSE}]
    profiles = {p["name"]: p for p in api.get("/v1/profiles").json()}
    assert (profiles["alpha"]["status"], profiles["alpha"]["error"]) == ("degraded", CAUSE)

    ballast.unlink()
    done = api.wait(api.submit(["true"], profile="alpha"))
    assert done["results"][0]["decision"]["outcome"] == "approved"
    assert api.get("/readyz").status_code == 200
    assert api.get("/v1/profiles/alpha").json()["status"] == "ok"


def test_an_always_answer_that_cannot_be_recorded_is_refused_and_stays_open(
    full_gateway: Gateway,
) -> None:
    gw, api = full_gateway, full_gateway.admin
    run_id, pending = api.parked(["echo keep-me"], profile="alpha")
    ballast = fill(gw.root, gw.homes["alpha"])
    r = api.answer(run_id, pending["approval_id"], "always")
    assert r.status_code == 507, r.text
    assert r.json()["detail"] == (
        "cannot record the answer: No space left on device; the approval is still open"
    )
    assert api.run(run_id)["status"] == "waiting_for_approval"
    assert "echo keep-me" not in read_allowlist(gw.homes["alpha"] / "config.yaml")
    assert "echo keep-me" not in gw.sup.profiles["alpha"].allowlist.rules()

    ballast.unlink()
    assert api.answer(run_id, pending["approval_id"], "always").status_code == 200
    done = api.wait(run_id)
    assert done["results"][0]["decision"]["outcome"] == "approved"
    assert "echo keep-me" in read_allowlist(gw.homes["alpha"] / "config.yaml")
    kinds = [(r.get("kind"), r["outcome"]) for r in _records(gw.homes["alpha"])]
    assert kinds[-2:] == [("answer", "answered"), (None, "approved")]


def test_an_always_answer_whose_rule_cannot_be_saved_is_refused(full_gateway: Gateway) -> None:
    gw, api = full_gateway, full_gateway.admin
    run_id, pending = api.parked(["echo keep-me"], profile="alpha")
    # Room for the answer's record in the log's last page, none for a new config.yaml.
    ballast = fill(gw.root, gw.homes["alpha"], log_room=1500)
    r = api.answer(run_id, pending["approval_id"], "always")
    assert r.status_code == 507, r.text
    detail = r.json()["detail"]
    assert detail.startswith("cannot save the rule to ") and "No space left on device" in detail
    assert api.run(run_id)["status"] == "waiting_for_approval"
    assert "echo keep-me" not in gw.sup.profiles["alpha"].allowlist.rules()
    ballast.unlink()
    assert api.answer(run_id, pending["approval_id"], "once").status_code == 200
    assert api.wait(run_id)["results"][0]["decision"]["outcome"] == "approved"
    assert "echo keep-me" not in read_allowlist(gw.homes["alpha"] / "config.yaml")
