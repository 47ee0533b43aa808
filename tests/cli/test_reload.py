"""docs/operations.md#live-reconfiguration against a real ``multiplex up``: the watcher follows
multiplex.yaml and the profiles folder; SIGHUP and POST /v1/admin/reload do it on demand."""

from __future__ import annotations

import json
import shutil
import signal
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Up, start_up, stop_up
from tests.gateway.conftest import TOKENS, Api, make_homes

pytestmark = pytest.mark.slow


def until(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture(params=["polling", "auto"])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    homes = make_homes(tmp_path)
    config = tmp_path / "multiplex.yaml"
    config.write_text(config.read_text().replace("mode: polling", f"mode: {request.param}"))
    for name in ("alpha", "beta", "gamma"):
        path = homes[name] / "config.yaml"
        text = path.read_text().replace("timeout: 30", "timeout: 900")
        path.write_text(text.replace("timeout: 1\n", "timeout: 900\n"))
    proc, url, token = start_up(tmp_path)
    up = Up(proc, tmp_path, homes, url, token)
    try:
        yield up
    finally:
        up.logs = stop_up(proc)  # type: ignore[attr-defined]


def _names(up: Up) -> set[str]:
    return {p["name"] for p in up.admin.get("/v1/profiles").json()}


def test_new_home_route_and_default_are_served_without_restart(fresh: Up) -> None:
    up = fresh
    made = up.cli("profiles", "init", "newbie")
    assert made.returncode == 0, made.stderr
    until("newbie served", lambda: "newbie" in _names(up))
    config = up.root / "multiplex.yaml"
    config.write_text(
        textwrap.dedent("""\
            profiles_dir: profiles
            default_profile: newbie
            routes:
              - {profile: newbie, platform: slack}
              - {profile: beta, platform: telegram, chat_id: "42"}
            watch: {mode: polling, debounce_ms: 20}
        """)
    )

    def routed() -> bool:
        r = up.admin.post("/v1/runs", json={"route": {"platform": "slack"}, "commands": ["true"]})
        return r.status_code == 202 and up.admin.run(r.json()["run_id"])["profile"] == "newbie"

    until("the slack route to newbie", routed)
    plain = up.admin.submit(["true"])  # no profile, no route: the new default_profile
    assert up.admin.run(plain)["profile"] == "newbie"
    assert up.admin.get("/readyz").json()["config_ok"] is True


def test_a_removed_home_is_drained_and_retired(fresh: Up) -> None:
    up = fresh
    gamma = up.profile("gamma")
    run_id, _ = gamma.parked(["echo parked-until-removed"])
    shutil.rmtree(up.homes["gamma"])
    done = until(
        "the parked run to end",
        lambda: (r := up.admin.run(run_id))["status"] == "cancelled" and r,
    )
    assert done["results"][0]["decision"]["cause"] == "profile removed from multiplex.yaml"
    until("gamma gone", lambda: "gamma" not in _names(up))
    assert up.admin.get("/v1/profiles/gamma").status_code == 404
    assert Api(up.url, TOKENS["gamma"]).get("/v1/whoami").status_code == 401
    assert up.admin.get("/readyz").json()["config_ok"] is True
    # beta is what the telegram route names: removing it would make the config invalid,
    # so nothing changes (fail closed) and the error says why.
    shutil.rmtree(up.homes["beta"])
    ready = until("the error", lambda: (r := up.admin.get("/readyz").json())["config_error"] and r)
    assert "routes.0.profile" in ready["config_error"] and "beta" in _names(up)


def test_an_invalid_multiplex_yaml_keeps_the_last_good_one(fresh: Up) -> None:
    up = fresh
    config = up.root / "multiplex.yaml"
    good = config.read_text()
    config.write_text(good + "routes: {not: a list}\n")
    ready = until(
        "the error reported", lambda: (r := up.admin.get("/readyz").json())["config_error"] and r
    )
    assert ready["config_ok"] is False and "multiplex.yaml" in ready["config_error"]
    assert up.admin.get("/readyz").status_code == 200  # still serving the last good config
    r = up.admin.post(
        "/v1/runs", json={"route": {"platform": "telegram", "chat_id": 42}, "commands": ["true"]}
    )
    assert r.status_code == 202 and up.admin.run(r.json()["run_id"])["profile"] == "beta"
    config.write_text(good)
    until("the error cleared", lambda: up.admin.get("/readyz").json()["config_ok"])
    logs = stop_up(up.proc)
    events = [json.loads(x) for x in logs.splitlines() if x.startswith("{")]
    assert any("not applied" in e.get("message", "") for e in events)


def test_sighup_and_the_admin_endpoint_reload(fresh: Up) -> None:
    up = fresh
    (up.root / "multiplex.yaml").write_text(
        "profiles_dir: profiles\ndefault_profile: alpha\nwatch: {mode: off}\n"
    )
    # watch.mode waits for a restart: this process still watches, so either way works.
    up.proc.send_signal(signal.SIGHUP)
    time.sleep(0)
    assert up.proc.poll() is None
    refused = up.profile("alpha").post("/v1/admin/reload")
    assert refused.status_code == 404
    answer = up.admin.post("/v1/admin/reload")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["ok"] is True and body["error"] is None and body["profiles"] == 4
    assert body["restart_required"] == ["watch.mode"]
    logs = stop_up(up.proc)
    events = [json.loads(x) for x in logs.splitlines() if x.startswith("{")]
    causes = {e.get("cause") for e in events if e.get("event") == "reload.requested"}
    assert {"SIGHUP", "api"} <= causes, causes


def test_live_limits_apply_and_restart_only_keys_say_so(fresh: Up) -> None:
    """docs/operations.md#live-reconfiguration: limits apply at once; a port change waits, said aloud."""
    up = fresh
    config = up.root / "multiplex.yaml"
    good = config.read_text()
    before = up.admin.post("/v1/runs", json={"commands": ["true"], "note": "x" * 3000})
    assert before.status_code != 413  # 1 MiB by default
    config.write_text(good + "gateway: {port: 1, max_request_bytes: 2048}\n")
    body = up.admin.post("/v1/admin/reload").json()
    assert body["ok"] is True and body["restart_required"] == ["gateway.port"], body
    ready = up.admin.get("/readyz")
    assert ready.status_code == 200 and ready.json()["restart_required"] == ["gateway.port"]
    # The same socket still serves, and the new body limit holds from the next request.
    big = up.admin.post("/v1/runs", json={"commands": ["true"], "note": "x" * 3000})
    assert big.status_code == 413, big.text
    assert up.admin.wait(up.admin.submit(["true"]))["status"] == "completed"
    config.write_text(good)
    body = up.admin.post("/v1/admin/reload").json()
    assert body["ok"] is True and body["restart_required"] == []
    assert up.admin.get("/readyz").json()["restart_required"] == []
    logs = stop_up(up.proc)
    assert "gateway.port changed; it takes effect at the next restart" in logs


def test_api_docs_are_served_offline(up: Up) -> None:
    page = up.admin.get("/docs")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower() and "https://" not in page.text
    assert "/api-docs-assets/swagger-ui-bundle.js" in page.text
    js = up.admin.get("/api-docs-assets/swagger-ui-bundle.js")
    assert js.status_code == 200 and len(js.content) > 100_000
    redoc = up.admin.get("/redoc")
    assert redoc.status_code == 200 and "https://" not in redoc.text
    assert up.admin.get("/api-docs-assets/../../etc/passwd").status_code == 404
