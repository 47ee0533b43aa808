"""docs/kernels.md#authority: a cell's shell requests run under the cell running NOW."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

from multiplex import Supervisor
from multiplex.approval.waiting._pending import Answer, Choice

HELPER = "from multiplex.kernel import run, RequestRefused\n"
DANGEROUS = "rm -rf /tmp/mx-kernel-test-never-there"
# A thread that asks with the token of the cell that started it, sending the
# request itself (run() on a thread is refused in the kernel already, and the
# supervisor refuses any thread but the cell's own: test_kernel_cell_thread.py).
ASK_WITH_ITS_TOKEN = (
    "import os, threading, time\n"
    "import multiplex.kernel as k\n"
    "its_token = k._parent_token()\n"
    "def ask(command):\n"
    "    reply = k._ask({'key': k._Channel.key, 'cell': its_token, 'command': command})\n"
    "    return 'ran' if reply.get('ok') else 'refused: ' + reply['refused']\n"
    "def tell(done, verdict):\n"  # whole or not at all: the test reads it once it exists
    "    open(done + '.part', 'w').write(verdict)\n"
    "    os.replace(done + '.part', done)\n"
)


def _decisions(sup: Supervisor, profile: str) -> list[dict[str, object]]:
    log = sup.profiles[profile].home / "logs" / "decisions.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def _work(sup: Supervisor, name: str) -> Path:
    path = sup.profiles["a"].home / "work" / name
    path.unlink(missing_ok=True)
    return path


def test_a_function_from_cell_1_runs_under_cell_2s_cron_authority(sup: Supervisor) -> None:
    define = sup.execute_code(
        HELPER + f"def clean():\n    return run({DANGEROUS!r})\n",
        profile="a",
        session="auth",
        context="api",
    )
    assert define.outcome == "ok"
    started = time.monotonic()
    called = sup.execute_code(
        "r = clean()\n(r.outcome, r.cause)", profile="a", session="auth", context="cron"
    )
    assert called.result == "('blocked', 'unattended: cron')"
    assert time.monotonic() - started < 30  # refused at once, never parked for a human
    assert called.tool_calls == 1
    assert not sup.gate.pending(sup.profiles["a"]).list_open()
    row = _decisions(sup, "a")[-1]
    assert row["context"] == "cron" and row["command"] == DANGEROUS and row["outcome"] == "blocked"


def test_an_api_cell_asks_a_human_through_its_own_run(sup: Supervisor) -> None:
    sup.execute_code(
        HELPER + f"def clean():\n    return run({DANGEROUS!r})\n", profile="a", session="ask"
    )
    results: list[object] = []
    worker = threading.Thread(
        target=lambda: results.append(
            sup.execute_code("clean().outcome", profile="a", session="ask", run_id="run-ask-1")
        )
    )
    worker.start()
    table = sup.gate.pending(sup.profiles["a"])
    deadline = time.monotonic() + 60
    while not table.list_open() and time.monotonic() < deadline:
        time.sleep(0.02)
    (request,) = table.list_open()
    assert request.run_id == "run-ask-1" and request.session == "ask" and request.context == "api"
    request.answer(Answer(Choice.DENY, by="test"))
    worker.join(60)
    (result,) = results
    assert getattr(result, "result") == "'denied'"  # noqa: B009


def test_a_background_thread_after_its_cell_settled_is_refused(sup: Supervisor) -> None:
    # Files in the profile's cwd: the kernel (in its sandbox) sees only that.
    go, done = _work(sup, "go-1"), _work(sup, "done-1")
    setup = sup.execute_code(
        ASK_WITH_ITS_TOKEN
        + "def later(go, done):\n"
        + "    while not os.path.exists(go):\n"
        + "        time.sleep(0.01)\n"
        + "    tell(done, ask('echo from-the-past'))\n"
        + f"threading.Thread(target=later, args=({str(go)!r}, {str(done)!r}), daemon=True).start()\n",
        profile="a",
        session="threads",
    )
    assert setup.outcome == "ok"
    go.write_text("")
    deadline = time.monotonic() + 60
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert done.read_text() == "refused: no cell of this kernel is running"


def test_an_old_thread_is_refused_while_a_later_cell_runs(sup: Supervisor) -> None:
    go, done = _work(sup, "go-2"), _work(sup, "done-2")
    sup.execute_code(
        ASK_WITH_ITS_TOKEN
        + "def waiter(go, done):\n"
        + "    while not os.path.exists(go):\n"
        + "        time.sleep(0.01)\n"
        + "    tell(done, ask('echo old'))\n"
        + f"old = threading.Thread(target=waiter, args=({str(go)!r}, {str(done)!r}), daemon=True)\n"
        + "old.start()\n",
        profile="a",
        session="old-thread",
    )
    later = sup.execute_code(
        f"open({str(go)!r}, 'w').close()\nold.join(60)\nopen({str(done)!r}).read()",
        profile="a",
        session="old-thread",
    )
    assert later.result == "'refused: the cell that sent this request has settled'"


def test_the_per_cell_budget(sup: Supervisor) -> None:
    # Profile c: max_tool_calls 2, counted per cell.
    code = (
        HELPER
        + "seen = []\n"
        + "for i in range(3):\n"
        + "    try:\n"
        + "        seen.append(run('echo hi').exit_code)\n"
        + "    except RequestRefused as exc:\n"
        + "        seen.append(str(exc))\n"
        + "seen"
    )
    result = sup.execute_code(code, profile="c", session="budget", context="cron")
    assert result.result == "[0, 0, 'code_execution.max_tool_calls (2) reached for this cell']"
    again = sup.execute_code(
        "run('echo again').exit_code", profile="c", session="budget", context="cron"
    )
    assert again.result == "0"


def test_forged_requests_are_refused(sup: Supervisor) -> None:
    probe = sup.execute_code(
        "import multiplex.kernel as k, os\n"
        "(k._Channel.path, os.path.exists(os.path.join(os.path.dirname(k._Channel.path), 'channel.json')),"
        " [n for n in os.environ if 'MULTIPLEX' in n])",
        profile="b",
        session="forge",
    )
    assert probe.result is not None
    path = probe.result.split("'")[1]
    assert ", False, []" in probe.result  # the key file is gone, nothing in the env

    def ask(request: dict[str, object]) -> dict[str, object]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(path)
            conn.sendall(json.dumps(request).encode() + b"\n")
            conn.shutdown(socket.SHUT_WR)
            data = b"".join(iter(lambda: conn.recv(65536), b""))
        reply: dict[str, object] = json.loads(data)
        return reply

    for forged in (
        {"key": "guess", "cell": "guess", "command": "echo pwned"},
        {"cell": None, "command": "echo pwned"},
        {"key": None, "command": "echo pwned"},
    ):
        reply = ask(forged)
        assert reply == {"ok": False, "refused": "not authenticated as this kernel"}
    # A garbage line never reaches the gate either.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        conn.sendall(b"[1, 2\n")
        conn.shutdown(socket.SHUT_WR)
        assert json.loads(b"".join(iter(lambda: conn.recv(65536), b"")))["ok"] is False


def test_run_outside_a_kernel_is_refused() -> None:
    import pytest

    from multiplex.kernel import RequestRefused, run

    with pytest.raises(RequestRefused, match="not inside a multiplex session kernel"):
        run("echo hi")
