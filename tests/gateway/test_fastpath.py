"""The hot routes answer exactly as the framework would, and never block the loop (docs/gateway.md#performance)."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from multiplex.gateway.api._verdict import ON_LOOP_MAX
from multiplex.gateway.http._fastpath import FastPath
from multiplex.gateway.http._headers import SecurityHeaders
from multiplex.gateway.http._json_body import JsonBody
from multiplex.gateway.http._limits import BodyLimit
from tests.gateway.conftest import Gateway

# -- "wait": one request, the finished run -----------------------------------------------------


def test_wait_answers_with_the_finished_run(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    r = api.post("/v1/runs", json={"commands": ["echo ok waited"], "wait": 10})
    assert r.status_code == 200
    run = r.json()
    assert run["status"] == "completed"
    assert run["results"][0]["stdout"] == "ok waited\n"
    assert run == api.run(run["run_id"])  # the GET document, word for word


def test_wait_on_a_parked_run_answers_202_with_the_run_as_it_stands(gateway: Gateway) -> None:
    api = gateway.profile["alpha"]
    r = api.post("/v1/runs", json={"commands": ["echo needs a human"], "wait": 0.3})
    assert r.status_code == 202
    run = r.json()
    assert run["status"] == "waiting_for_approval"
    assert run["pending_approval"]["command"] == "echo needs a human"
    approval = run["pending_approval"]["approval_id"]
    assert api.answer(run["run_id"], approval, "once").status_code == 200
    assert api.wait(run["run_id"])["status"] == "completed"


def test_wait_for_a_refused_run_reports_it_finished(gateway: Gateway) -> None:
    api = gateway.profile["gamma"]  # approvals.timeout: 1
    r = api.post("/v1/runs", json={"commands": ["echo never answered"], "wait": 20})
    assert r.status_code == 200
    assert r.json()["status"] == "failed"
    assert r.json()["results"][0]["decision"]["outcome"] == "timeout"


@pytest.mark.parametrize("wait", [-1, 301, "soon"])
def test_a_bad_wait_is_a_422(gateway: Gateway, wait: Any) -> None:
    r = gateway.admin.post("/v1/runs", json={"commands": ["true"], "wait": wait})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "wait"]


# -- errors are the framework's own -------------------------------------------------------------


def test_hot_routes_refuse_like_the_framework(gateway: Gateway) -> None:
    routes = [
        ("POST", "/v1/runs", {"commands": ["true"]}),
        ("POST", "/v1/approvals/test", {"profile": "alpha", "command": "true"}),
        ("GET", "/v1/runs/run-nope", None),
    ]
    for method, path, body in routes:
        for api in (gateway.anonymous, gateway.as_token("not-a-token-at-all-xxxxxxxx")):
            r = api.request(method, path, json=body)
            assert r.status_code == 401, (path, r.text)
            assert r.json() == {"detail": "missing or invalid bearer token"}
            assert r.headers["www-authenticate"] == "Bearer"
    alpha = gateway.profile["alpha"]
    # Another profile's name and an unknown one: the same 404 words.
    for name in ("beta", "ghost"):
        r = alpha.post("/v1/approvals/test", json={"profile": name, "command": "true"})
        assert r.status_code == 404
        assert r.json() == {"detail": f"no profile named {name!r} is served"}
        r = alpha.post("/v1/runs", json={"profile": name, "commands": ["true"]})
        assert r.json() == {"detail": f"no profile named {name!r} is served"}
    r = alpha.get("/v1/runs/run-nope")
    assert (r.status_code, r.json()) == (404, {"detail": "no run 'run-nope'"})
    # A body that does not validate is answered by the framework: same 422 shape.
    r = alpha.post("/v1/approvals/test", json={"profile": "alpha"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "command"]
    # Not declared JSON: the framework decides, and refuses it as it always did.
    for content_type in ("text/plain", ""):
        r = alpha.post(
            "/v1/approvals/test",
            content=b'{"profile": "alpha", "command": "true"}',
            headers={"Content-Type": content_type},
        )
        assert r.status_code == 422
        assert r.json()["detail"][0]["type"] == "model_attributes_type"


def test_a_charset_in_the_content_type_still_gets_the_verdict(gateway: Gateway) -> None:
    body = {"profile": "alpha", "command": "git push --force origin main", "context": "cron"}
    plain = gateway.admin.post("/v1/approvals/test", json=body)
    charset = gateway.admin.post(
        "/v1/approvals/test",
        content=httpx.Request("POST", "/", json=body).content,
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert plain.status_code == charset.status_code == 200
    assert plain.json() == charset.json()
    assert plain.json()["outcome"] == "blocked" and plain.json()["cause"] == "unattended: cron"


# -- where the gate runs: short lines of warm profiles on the loop, the rest in the gate pool ------


def _where(gateway: Gateway, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    threads: list[str] = []
    real = gateway.sup.test

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(gateway.sup, "test", recording)
    return threads


def test_a_short_line_is_decided_on_the_loop_a_long_or_cold_one_in_the_gate_pool(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = _where(gateway, monkeypatch)
    short = {"profile": "alpha", "command": "git push " + "x" * (ON_LOOP_MAX - 9)}
    long = {"profile": "alpha", "command": short["command"] + "y"}
    for body in (short, short, long):
        assert gateway.admin.post("/v1/approvals/test", json=body).status_code == 200
    loop = threads[1]
    assert loop == "multiplex-gateway"  # the server's event loop thread
    assert threads[2].startswith("multiplex-gate_")
    # Just reloaded: the first decision builds the rule index, off the loop.
    config = gateway.homes["alpha"] / "config.yaml"
    config.write_text(config.read_text().replace('"true",', '"true", "ls",'))
    assert gateway.sup.reload("alpha").result == "ok"
    threads.clear()
    for _ in range(2):
        answer = gateway.admin.post(
            "/v1/approvals/test", json={"profile": "alpha", "command": "ls"}
        )
        assert answer.json()["outcome"] == "approved"
    assert threads[0].startswith("multiplex-gate_") and threads[1] == loop


def test_a_slow_verdict_never_blocks_the_event_loop(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    threads: list[str] = []
    real = gateway.sup.test

    def slow_test(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        entered.set()
        release.wait(30)  # stands for a pathological line that takes long to check
        return real(*args, **kwargs)

    monkeypatch.setattr(gateway.sup, "test", slow_test)
    box: list[httpx.Response] = []
    body = {"profile": "alpha", "command": "a|" * 500 + "b"}
    caller = threading.Thread(
        target=lambda: box.append(gateway.admin.post("/v1/approvals/test", json=body))
    )
    caller.start()
    try:
        assert entered.wait(15)
        # The loop is free while the gate works: other requests are answered meanwhile.
        assert gateway.anonymous.get("/healthz").status_code == 200
        assert gateway.admin.get("/v1/whoami").json()["role"] == "admin"
        assert not box  # the slow verdict is still being worked out
    finally:
        release.set()
        caller.join(30)
    assert box[0].status_code == 200
    assert threads and threads[0].startswith("multiplex-gate_")


def test_the_fast_path_is_installed_inside_the_body_limit(gateway: Gateway) -> None:
    # The headers wrap everything; the limit must see the bytes before the fast
    # path reads whole bodies; FastAPI comes last.
    app = gateway.server.app
    headers = app.front
    assert isinstance(headers, SecurityHeaders) and isinstance(headers.app, BodyLimit)
    # /mcp is routed first (a closure over the rest), then the JSON body check.
    front = headers.app.app
    cells = dict(zip(front.__code__.co_freevars, front.__closure__ or (), strict=True))
    rest = cells["other"].cell_contents
    assert isinstance(rest, JsonBody)
    fast = rest.app
    assert isinstance(fast, FastPath) and fast.app == app.framework
