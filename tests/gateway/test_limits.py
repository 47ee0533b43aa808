"""No noisy neighbour: per-profile run limits, parked runs without threads, body limits (docs/gateway.md#limits)."""

from __future__ import annotations

import json
import socket
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from multiplex import Supervisor
from multiplex.gateway import GatewayServer
from tests.gateway.conftest import ADMIN, TOKENS, Api, make_homes

LIMITED = """\
    profiles_dir: profiles
    default_profile: alpha
    watch: {mode: off}
    gateway: {max_runs_per_profile: %d, max_request_bytes: %d}
"""


class Served:
    def __init__(self, server: GatewayServer, sup: Supervisor) -> None:
        self.server, self.sup = server, sup
        base = server.url.rstrip("/")
        self.base = base
        self.admin = Api(base, ADMIN)
        self.alpha = Api(base, TOKENS["alpha"])
        self.beta = Api(base, TOKENS["beta"])


def _serve(root: Path, *, per_profile: int, body: int = 1024 * 1024, workers: int = 256) -> Served:
    homes = make_homes(root)
    alpha = homes["alpha"] / "config.yaml"  # no prompt may time out while the test submits
    alpha.write_text(alpha.read_text().replace("timeout: 30", "timeout: 600"))
    (root / "multiplex.yaml").write_text(textwrap.dedent(LIMITED % (per_profile, body)))
    sup = Supervisor.from_config(root / "multiplex.yaml")
    server = GatewayServer(
        sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=2.0, max_workers=workers
    ).start()
    return Served(server, sup)


@pytest.fixture
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Served]:
    options = getattr(request, "param", {})
    s = _serve(tmp_path, **{"per_profile": 32, **options})
    try:
        yield s
    finally:
        s.server.stop()
        s.sup.close()


def _park_many(api: Api, count: int, *, session: str = "park") -> list[httpx.Response]:
    """Submit ``count`` runs that each wait for an approval (alpha asks for `echo parked`)."""
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def submitter(indices: range) -> None:
        with api.client(timeout=60) as c:  # one keep-alive connection per submitter
            for i in indices:
                # Distinct commands: identical ones in one session would share one prompt.
                body = {"commands": [f"echo parked {i}"], "session_id": session}
                r = c.post("/v1/runs", json=body)
                with lock:
                    answers.append(r)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(submitter, [range(k, count, 8) for k in range(8)]))
    return answers


def _until_parked(served: Served, profile: str, count: int) -> None:
    table = served.sup.gate.pending(served.sup.profile(profile))
    deadline = threading.Event()
    for _ in range(1500):
        if len(table.list_open()) >= count:
            return
        deadline.wait(0.02)
    raise AssertionError(f"{len(table.list_open())} of {count} runs parked")


# -- gateway.max_runs_per_profile ---------------------------------------------------------


def test_runs_beyond_the_profile_limit_get_429_with_retry_after(served: Served) -> None:
    answers = _park_many(served.alpha, 40)
    codes = sorted(r.status_code for r in answers)
    assert codes == [202] * 32 + [429] * 8
    refused = next(r for r in answers if r.status_code == 429)
    assert refused.headers["Retry-After"] == "1"
    assert "max_runs_per_profile" in refused.json()["detail"]
    # Another profile is not limited by alpha's backlog: its run completes at once.
    assert served.beta.wait(served.beta.submit(["true"]))["status"] == "completed"
    # A finished run frees its place.
    run_id = next(r.json()["run_id"] for r in answers if r.status_code == 202)
    served.alpha.post(f"/v1/runs/{run_id}/cancel")
    served.alpha.wait(run_id)
    assert served.alpha.post("/v1/runs", json={"commands": ["true"]}).status_code == 202


@pytest.mark.slow
@pytest.mark.parametrize("served", [{"per_profile": 300, "workers": 256}], indirect=True)
def test_260_parked_runs_in_one_profile_do_not_delay_another_profiles_run(
    served: Served,
) -> None:
    # The example: 260 parked runs once filled the 256-thread pool.
    assert all(r.status_code == 202 for r in _park_many(served.alpha, 260))
    _until_parked(served, "alpha", 260)
    run = served.beta.wait(served.beta.submit(["true"]), timeout=20)
    assert run["status"] == "completed"
    served.admin.post("/v1/sessions/alpha/park/reset")


@pytest.mark.slow
@pytest.mark.parametrize("served", [{"per_profile": 300, "workers": 4}], indirect=True)
def test_a_parked_run_holds_no_worker_thread(served: Served) -> None:
    # 300 parked runs and only 4 workers: another profile's run still completes,
    # and the parked runs resume (in those 4 workers) once answered.
    assert all(r.status_code == 202 for r in _park_many(served.alpha, 300))
    _until_parked(served, "alpha", 300)
    workers = [t for t in threading.enumerate() if t.name.startswith("multiplex-run")]
    assert len(workers) <= 4
    assert served.beta.wait(served.beta.submit(["true"]), timeout=20)["status"] == "completed"
    open_ = served.admin.get("/v1/approvals").json()
    with served.admin.client() as c:
        for row in open_:
            body = {"approval_id": row["approval_id"], "choice": "once"}
            assert c.post(f"/v1/runs/{row['run_id']}/approval", json=body).status_code == 200
    for row in open_[:20]:
        done = served.admin.wait(row["run_id"], timeout=20)
        assert done["status"] == "completed", done
        assert done["results"][0]["stdout"].startswith("parked ")


# -- request bodies ---------------------------------------------------------------------------


def test_a_10_mb_body_is_refused_with_413_and_not_echoed(served: Served) -> None:
    big = "x" * (10 * 1024 * 1024)
    r = served.admin.post("/v1/runs", content=json.dumps({"commands": [big]}).encode())
    assert r.status_code == 413
    assert len(r.content) < 200 and "x" * 100 not in r.text


def test_a_chunked_body_past_the_limit_is_cut_off_with_413(served: Served) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"commands": ["'
        for _ in range(40):
            yield b"y" * 65536
        yield b'"]}'

    with served.admin.client() as c:
        r = c.post("/v1/runs", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert "y" * 100 not in r.text


def test_a_lying_content_length_is_refused(served: Served) -> None:
    # A raw request: the header claims more than the limit; nothing else is sent.
    host, port = served.server.host, served.server.port
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + ADMIN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n"
        )
        head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 413")


def test_validation_errors_never_echo_the_body(served: Served) -> None:
    secret = "sk-live-" + "s" * 40
    cases = [
        {"commands": [secret], "context": "interactive"},  # bad literal
        {"commands": ["a" * 70_000 + secret]},  # too long
        {"commands": [secret], "bogus": secret},  # extra key
        {"commands": {"x": secret}},  # wrong type
        {"commands": [secret], "profile": "alpha", "route": {"platform": secret}},  # both
    ]
    for body in cases:
        r = served.admin.post("/v1/runs", json=body)
        assert r.status_code == 422, r.text
        assert secret not in r.text and "aaaaaaaaaa" not in r.text
        assert all({"type", "loc", "msg"} == set(e) for e in r.json()["detail"])
    # A key name is part of the body too: long ones are cut short.
    r = served.admin.post("/v1/runs", json={"commands": ["true"], "k" * 5000: 1})
    assert r.status_code == 422 and "k" * 65 not in r.text
    # Not JSON at all (docs/gateway.md#request-bodies): 400, the body not echoed either.
    r = served.admin.post(
        "/v1/runs", content=secret.encode(), headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 400 and secret not in r.text


@pytest.mark.parametrize("served", [{"body": 4096}], indirect=True)
def test_the_body_limit_is_configurable(served: Served) -> None:
    assert served.admin.post("/v1/runs", json={"commands": ["x" * 5000]}).status_code == 413
    ok = served.admin.post("/v1/runs", json={"commands": ["true"] * 3})
    assert ok.status_code == 202


@pytest.mark.parametrize("served", [{"per_profile": 1}], indirect=True)
def test_a_run_whose_announcement_failed_ends_failed_and_gives_its_place_back(
    served: Served,
) -> None:
    # What POST /v1/runs does in a cluster when Redis cannot take run.started
    # (docs/cluster.md#what-each-failure-does): the run is admitted, then abandoned.
    runs = served.server.gateway.runs
    run = runs.admit("alpha", "s", "", ["true"])
    with pytest.raises(Exception, match="max_runs_per_profile"):
        runs.admit("alpha", "s", "", ["true"])  # the limit counts it
    runs.abandon(run, "cluster: redis unavailable")
    runs.abandon(run, "cluster: redis unavailable")  # twice (a drain, a stop) counts once
    shown = served.alpha.run(run.run_id)
    assert (shown["status"], shown["error"]) == ("failed", "cluster: redis unavailable")
    assert shown["results"] == []  # nothing ran
    parked = served.alpha.submit(["echo parked"])  # its place is free again, once
    served.alpha.wait(parked, "waiting_for_approval")
    assert served.alpha.post("/v1/runs", json={"commands": ["true"]}).status_code == 429
    served.alpha.post(f"/v1/runs/{parked}/cancel")
