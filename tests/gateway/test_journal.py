"""docs/operations.md#what-survives-a-crash: the run journal, on the real thing.

- a real ``multiplex up`` killed with SIGKILL while runs are parked on a human
  and others execute: started again on the same folder, it reports every run
  (parked ones ``cancelled``, executing ones ``failed``, each with its cause),
  lists them, records each parked prompt as cancelled by nobody, and runs
  nothing again; a second start records nothing twice;
- a torn journal tail (and a damaged line) is reported with its file and line,
  skipped, and never stops the start;
- the journal holds no known secret and a sandboxed command cannot read it;
- in a cluster each node has its own file, read again under its node_id.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from multiplex import Supervisor
from multiplex.execution import bwrap_status
from multiplex.gateway import GatewayServer, create_app
from multiplex.gateway.journal import RESTARTED, RESTARTED_PARKED
from multiplex.gateway.journal._recovery import RESTARTED_ANSWERED, _ended
from tests.conftest import write_home
from tests.gateway.cluster_nodes import Node, make_cluster_homes
from tests.gateway.conftest import ADMIN, Api, start_up

TOKEN = "work-token-for-journal-tests-7f3a9c"
BUSY_TOKEN = "busy-token-for-journal-tests-2b8e1d"
# strict: everything but `sleep` and `echo ok` asks; busy: nothing asks.
WORK = """\
    terminal:
      cwd: .
      timeout: 120
    command_allowlist: ["sleep *", "true", "echo ok *"]
    approvals:
      mode: strict
      timeout: 600
"""
BUSY = """\
    terminal:
      cwd: .
      timeout: 120
    approvals:
      mode: "off"
"""
JOURNAL = ".multiplex/journal/gateway.jsonl"


def _project(root: Path, *, busy: str = BUSY) -> dict[str, Path]:
    profiles = root / "profiles"
    homes = {
        "work": write_home(profiles, "work", WORK, f"MULTIPLEX_TOKEN={TOKEN}\n"),
        "busy": write_home(profiles, "busy", busy, f"MULTIPLEX_TOKEN={BUSY_TOKEN}\n"),
    }
    (root / "multiplex.yaml").write_text(
        "profiles_dir: profiles\ndefault_profile: work\nwatch: {mode: polling, debounce_ms: 20}\n"
    )
    return homes


def _records(home: Path) -> list[dict[str, Any]]:
    path = home / "logs/decisions.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _until(check: Any, what: str, tries: int = 1500) -> None:
    for _ in range(tries):
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(what)


@pytest.mark.slow
def test_a_kill_9_leaves_every_run_reported_and_nothing_runs_again(tmp_path: Path) -> None:
    homes = _project(tmp_path)
    work = homes["work"] / "workspace"
    busy = homes["busy"] / "workspace"
    up = start_up(tmp_path)
    try:
        api = up.api
        # The control: an answered prompt runs its command, which leaves its file.
        control, pending = api.parked(["echo control >> ran-control.txt"], profile="work")
        assert api.answer(control, pending["approval_id"], "once").status_code == 200
        assert api.wait(control)["status"] == "completed"
        assert (work / "ran-control.txt").read_text() == "control\n"

        # Answered, and its command running when the gateway dies: failed, never "unanswered".
        answered, asked = api.parked(
            ["echo answered >> ran-answered.txt; sleep 30"], profile="work"
        )
        assert api.answer(answered, asked["approval_id"], "once").status_code == 200
        _until(lambda: (work / "ran-answered.txt").exists(), "the answered command did not start")
        parked = dict(
            api.parked([f"echo parked-{n} >> ran-{n}.txt", "true"], profile="work")
            for n in range(3)
        )
        executing = [
            api.submit([f"echo started >> started-{n}.txt; sleep 30", "echo never"], profile="busy")
            for n in range(3)
        ]
        executing.append(api.submit(["sleep 30"], profile="work"))  # allowlisted: no prompt
        for run_id in executing:
            api.wait(run_id, "running")
        for n in range(3):
            _until(lambda n=n: (busy / f"started-{n}.txt").exists(), "the command did not start")
        os.kill(up.proc.pid, signal.SIGKILL)
        up.proc.wait(timeout=10)
    finally:
        if up.proc.poll() is None:
            up.proc.kill()
            up.proc.wait()

    journal = tmp_path / JOURNAL
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
    again = start_up(tmp_path)
    try:
        api = again.api
        for run_id in parked:
            doc = api.run(run_id)
            assert (doc["status"], doc["error"], doc["pending_approval"]) == (
                "cancelled",
                RESTARTED_PARKED,
                None,
            ), doc
            assert doc["results"] == [] and doc["finished_at"] is not None
        for run_id in executing:
            doc = api.run(run_id)
            assert (doc["status"], doc["error"]) == ("failed", RESTARTED), doc
        doc = api.run(answered)
        assert (doc["status"], doc["error"], doc["pending_approval"]) == ("failed", RESTARTED, None)
        its = [r for r in _records(homes["work"]) if r.get("approval_id") == asked["approval_id"]]
        assert [(r["outcome"], r["answered_by"]) for r in its] == [("approved", "admin")], its
        done = api.run(control)
        assert done["status"] == "completed"
        assert done["results"][0]["decision"]["outcome"] == "approved"

        rows = {r["run_id"]: r for r in api.get("/v1/runs").json()}
        for run_id in parked:  # what was submitted, though nothing of it ran
            first, second = rows[run_id]["commands"]
            assert first.startswith("echo parked-") and second == "true", rows[run_id]
        listed = {r["run_id"]: r["status"] for r in api.get("/v1/runs").json()}
        assert {run_id: listed.get(run_id) for run_id in parked} == dict.fromkeys(
            parked, "cancelled"
        )
        assert {run_id: listed.get(run_id) for run_id in executing} == dict.fromkeys(
            executing, "failed"
        )
        assert listed[control] == "completed"
        cancelled = api.get("/v1/runs", params={"status": "cancelled"}).json()
        assert {r["run_id"] for r in cancelled} == set(parked)
        assert api.get("/v1/approvals").json() == []  # nothing parked again

        # Each parked prompt has its record: cancelled, by nobody, never denied.
        records = {r.get("approval_id"): r for r in _records(homes["work"])}
        for run_id, pending in parked.items():
            record = records[pending["approval_id"]]
            assert (
                record["outcome"],
                record["cause"],
                record["decided_by"],
                record["answered_by"],
                record["choice"],
                record["run_id"],
            ) == ("cancelled", RESTARTED_PARKED, "nobody", "nobody", "cancelled", run_id)
            assert record["command"] == pending["command"]
        assert not [r for r in _records(homes["work"]) if r["outcome"] == "denied"]
        # Nothing ran again: no parked command, no executing one.
        assert not list(work.glob("ran-[0-9].txt"))
        assert (work / "ran-answered.txt").read_text() == "answered\n"
        for n in range(3):
            assert (busy / f"started-{n}.txt").read_text() == "started\n"
        assert again.stop() == 0
    finally:
        if again.proc.poll() is None:
            again.proc.kill()
            again.proc.wait()

    third = start_up(tmp_path)  # after a graceful stop: the same runs, no record twice
    try:
        for run_id in [*parked, *executing, control]:
            assert third.api.run(run_id)["status"] in ("cancelled", "failed", "completed")
        ids = [r.get("approval_id") for r in _records(homes["work"])]
        for pending in parked.values():
            assert ids.count(pending["approval_id"]) == 1
        assert third.stop() == 0
    finally:
        if third.proc.poll() is None:
            third.proc.kill()
            third.proc.wait()


def _server(root: Path) -> tuple[Supervisor, GatewayServer, Api]:
    sup = Supervisor.from_config(root / "multiplex.yaml")
    sup.start()
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=5.0).start()
    return sup, server, Api(server.url.rstrip("/"), ADMIN)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, Api]]:
    """A gateway in this process on a fresh project; stopped gracefully afterwards."""
    _project(tmp_path)
    sup, server, api = _server(tmp_path)
    try:
        yield tmp_path, api
    finally:
        server.stop()
        sup.close()


def test_a_torn_tail_is_reported_and_skipped_and_the_start_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _project(tmp_path)
    sup, server, api = _server(tmp_path)
    try:
        finished = api.wait(api.submit(["echo ok kept"], profile="work"))
    finally:
        server.stop()
        sup.close()
    journal = tmp_path / JOURNAL
    lines = journal.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    assert last["run"]["status"] == "completed"
    # A run the crash caught running, then its final line torn in the middle.
    running = {**last, "run": {**last["run"], "run_id": "run-caught", "status": "running"}}
    final = json.dumps({**running, "run": {**running["run"], "status": "completed"}}).encode()
    with journal.open("ab") as handle:
        handle.write(b"not json at all\n")
        handle.write(json.dumps(running).encode() + b"\n")
        handle.write(final[: len(final) // 2])
    damaged, torn = len(lines) + 1, len(lines) + 3

    with caplog.at_level(logging.WARNING, logger="multiplex.gateway"):
        sup, server, api = _server(tmp_path)
    try:
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert f"{journal}:{damaged}: damaged journal line (not JSON): skipped" in warnings
        assert f"{journal}:{torn}: damaged journal line (not JSON): skipped" in warnings
        caught = api.run("run-caught")
        assert (caught["status"], caught["error"]) == ("failed", RESTARTED)
        assert api.run(finished["run_id"])["status"] == "completed"
        # Compacted: one whole line a run, nothing damaged left.
        rows = [json.loads(x) for x in journal.read_bytes().splitlines()]
        assert sorted(r["run"]["run_id"] for r in rows) == sorted(
            [finished["run_id"], "run-caught"]
        )
    finally:
        server.stop()
        sup.close()


def test_the_journal_keeps_the_last_finished_runs_only(tmp_path: Path) -> None:
    """Bounded like the registry: a start keeps the last ``keep_runs`` finished runs."""
    _project(tmp_path)
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    sup.start()
    try:
        app = create_app(sup, admin_token=ADMIN, keep_runs=3)
        runs = app.state.gateway.runs
        ids = []
        for _ in range(5):  # one after the other: they finish in this order
            run = runs.submit("work", "s", "gateway", ["true"])
            assert run.done.wait(20)
            ids.append(run.run_id)
        app.state.gateway.drain(5.0)
        again = create_app(sup, admin_token=ADMIN, keep_runs=3).state.gateway
        kept = [r.run_id for r in again.runs.all()]
        assert kept == ids[-3:]
        rows = (tmp_path / JOURNAL).read_bytes().splitlines()
        assert [json.loads(x)["run"]["run_id"] for x in rows] == ids[-3:]
        again.drain(5.0)
    finally:
        sup.close()


def test_the_journal_holds_no_known_secret(served: tuple[Path, Api]) -> None:
    root, api = served
    done = api.wait(api.submit([f"echo ok {TOKEN} {BUSY_TOKEN}"], profile="work"))
    assert done["status"] == "completed"
    api.parked([f"echo {TOKEN} > leak.txt"], profile="work")
    text = (root / JOURNAL).read_text()
    assert done["run_id"] in text and "[REDACTED" in text
    assert TOKEN not in text and BUSY_TOKEN not in text


@pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")
def test_a_sandboxed_command_cannot_read_the_journal(tmp_path: Path) -> None:
    """docs/security.md#the-run-journal: even with the project folder as its cwd."""
    canary = "JOURNAL-CANARY-5d1e"
    _project(tmp_path, busy=f"terminal:\n  cwd: {tmp_path}\napprovals:\n  mode: 'off'\n")
    write_home(
        tmp_path / "profiles",
        "open",
        f"terminal:\n  sandbox: none\n  cwd: {tmp_path}\napprovals:\n  mode: 'off'\n",
    )
    sup, server, api = _server(tmp_path)
    try:
        assert api.wait(api.submit([f"echo {canary}"], profile="busy"))["status"] == "completed"
        journal = tmp_path / JOURNAL
        assert canary in journal.read_text()
        peek = f"cat {journal}; cat {JOURNAL}; ls -a {journal.parent} .multiplex"
        # The control: without a sandbox the same line reads it (so the test can fail).
        unsandboxed = api.wait(api.submit([peek], profile="open"))
        assert canary in unsandboxed["results"][0]["stdout"]
        sandboxed = api.wait(api.submit([peek], profile="busy"))
        result = sandboxed["results"][0]
        assert result["sandbox"] == "bwrap", result
        assert canary not in result["stdout"] and "gateway.jsonl" not in result["stdout"]
        assert result["exit_code"] != 0
    finally:
        server.stop()
        sup.close()


@pytest.mark.slow
def test_in_a_cluster_each_node_keeps_its_own_journal(redis_url: str, tmp_path: Path) -> None:
    """A node killed with a parked run and started again under its node_id reads its own
    file: the prompt gets its record once; the run document is Redis's ("node lost")."""
    profiles = make_cluster_homes(tmp_path)
    a = Node(tmp_path, "a", redis_url, node_timeout=2.0)
    b = Node(tmp_path, "b", redis_url, node_timeout=2.0)
    again: Node | None = None
    try:
        run_id, pending = a.admin.parked(["echo parked-on-a"], profile="alpha")
        b.admin.parked(["echo parked-on-b"], profile="alpha", session_id="s-b")
        a.kill9()
        lost = b.admin.wait(run_id, "failed", timeout=30)  # reaped by b first
        assert lost["error"] == "node lost"
        again = Node(tmp_path, "a", redis_url, node_timeout=2.0)
        assert again.admin.run(run_id)["error"] == "node lost"  # Redis's document
        assert (tmp_path / "node-a" / ".multiplex/journal/a.jsonl").exists()
        assert (tmp_path / "node-b" / ".multiplex/journal/b.jsonl").exists()
        records = [
            r
            for r in _records(profiles / "alpha")
            if r.get("approval_id") == pending["approval_id"]
        ]
        assert [(r["outcome"], r["cause"], r["answered_by"]) for r in records] == [
            ("cancelled", RESTARTED_PARKED, "nobody")
        ]
        assert b.admin.get("/v1/approvals").json()[0]["command"] == "echo parked-on-b"
    finally:
        for node in (a, b, again):
            if node is not None:
                node.stop()


def test_a_run_is_shown_finished_only_once_its_end_is_in_the_journal(tmp_path: Path) -> None:
    """docs/gateway.md#waiting-for-the-result: a read that comes between the run's end
    and its journal line waits for the line (a crash then cannot take back what a
    client was told)."""
    _project(tmp_path)
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    sup.start()
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=5.0).start()
    try:
        journal = server.app.state.gateway.runs.journal
        held, release = threading.Event(), threading.Event()
        note = journal.note

        def slow_note(run: Any, *args: Any, **kw: Any) -> None:
            if run.finished:
                held.set()
                release.wait(20)
            note(run, *args, **kw)

        journal.note = slow_note
        api = Api(server.url.rstrip("/"), ADMIN)
        run_id = api.submit(["echo ok held"], profile="busy")
        assert held.wait(20)
        seen: list[str] = []
        reader = threading.Thread(target=lambda: seen.append(api.run(run_id)["status"]))
        reader.start()
        reader.join(0.5)
        assert seen == []  # the end is not stored yet: the read waits
        release.set()
        reader.join(10)
        assert seen == ["completed"]
        rows = (tmp_path / JOURNAL).read_bytes().splitlines()
        assert json.loads(rows[-1])["run"]["status"] == "completed"
    finally:
        release.set()
        server.stop()
        sup.close()


def test_a_prompt_answered_just_before_the_crash_is_not_said_unanswered(tmp_path: Path) -> None:
    # The window between the answer's record and the run's line saying it runs again: the
    # journal still shows the prompt, the records its answer. The run ends failed (its
    # command never ran), and no record says nobody answered.
    homes = _project(tmp_path)
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    try:
        pending = {"approval_id": "ap-1", "command": "rm -rf x", "created_at": time.time() - 5}
        line = {"ts": time.time() - 4, "approval_id": "ap-1", "outcome": "approved"}
        line |= {"answered_by": "admin", "command": "rm -rf x", "run_id": "r-1"}
        (homes["work"] / "logs").mkdir(exist_ok=True)
        (homes["work"] / "logs/decisions.jsonl").write_text(json.dumps(line) + "\n")
        run = {"run_id": "r-1", "profile": "work", "session_id": "s", "context": "api"}
        run |= {"status": "waiting_for_approval", "pending_approval": pending, "results": []}
        ended = _ended(sup, {"ts": time.time(), "run": run}, time.time())["run"]
        assert (ended["status"], ended["error"]) == ("failed", RESTARTED_ANSWERED)
        assert [r["approval_id"] for r in _records(homes["work"])] == ["ap-1"]
        other = dict(run, run_id="r-2", pending_approval=dict(pending, approval_id="ap-2"))
        ended = _ended(sup, {"ts": time.time(), "run": other}, time.time())["run"]
        assert (ended["status"], ended["error"]) == ("cancelled", RESTARTED_PARKED)
        assert _records(homes["work"])[-1]["answered_by"] == "nobody"
    finally:
        sup.close()


def test_a_compactions_temp_file_left_by_a_kill_is_removed_at_the_next_start(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    folder = (tmp_path / JOURNAL).parent
    folder.mkdir(parents=True, exist_ok=True)
    left = folder / ".gateway.jsonl.4242.139757283773312.tmp"  # a kill -9 mid-compaction
    left.write_bytes(b"x" * 1000)
    other = folder / "notes.txt"
    other.write_text("kept")
    sup, server, _api = _server(tmp_path)
    try:
        assert not left.exists() and other.read_text() == "kept"
    finally:
        server.stop()
        sup.close()
