"""docs/kernels.md#authority: only the cell's own thread is answered, whatever another thread copies.

Each hostile case runs in a real kernel: a thread (or a forked process) takes
the token of the cell that runs NOW (it polls ``_parent_token()`` until a later
cell starts), copies it wherever the old code looked, and asks while that later
cell's own command waits for it. It must be refused, its command never run and
never recorded, the later cell's tool calls its own.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from multiplex import Supervisor

# Cell 1: a thread that waits for the next cell, takes its token and asks with
# it in one of several ways; its verdict goes to a file in the profile's cwd.
TAKEOVER = """
import os, threading, time
import multiplex.kernel as k
from multiplex.kernel import run, RequestRefused

def ask_raw(token, command):
    reply = k._ask({"key": k._Channel.key, "cell": token, "command": command, "timeout": None})
    if reply.get("ok"):
        return "ran: " + reply["result"]["outcome"]
    return "refused: " + str(reply.get("refused"))

def takeover(done, command, how):
    first = k._parent_token()
    while (token := k._parent_token()) in (None, first):
        time.sleep(0.01)
    # Everything the old code trusted: the thread attribute, and the main thread's place.
    setattr(threading.current_thread(), "_multiplex_cell", token)
    try:
        if how == "run":
            verdict = "ran: " + run(command).outcome
        elif how == "raw":
            verdict = ask_raw(token, command)
        elif how == "posing":
            # multiplex.kernel is told that whichever thread asks is the main thread.
            class Posing:
                def __getattr__(self, name):
                    return getattr(threading, name)
                def main_thread(self):
                    return threading.current_thread()
            k.threading = Posing()
            verdict = "ran: " + run(command).outcome
        elif how == "fork":
            pid = os.fork()
            if pid == 0:
                try:
                    open(done + ".child", "w").write(ask_raw(token, command))
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
            verdict = open(done + ".child").read()
    except RequestRefused as exc:
        verdict = "refused: " + str(exc)
    tell(done, verdict)

def tell(done, verdict):
    # Whole or not at all: whoever waits for the file reads it at once.
    open(done + ".part", "w").write(verdict)
    os.replace(done + ".part", done)

def start(done, command, how):
    threading.Thread(target=takeover, args=(done, command, how), daemon=True).start()
"""

NOT_THE_CELLS_THREAD = "this request did not come from the running cell's own thread"


def _decisions(sup: Supervisor, profile: str) -> list[dict[str, object]]:
    log = sup.profiles[profile].home / "logs" / "decisions.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def _work(sup: Supervisor, name: str) -> Path:
    path = sup.profiles["a"].home / "work" / name
    path.unlink(missing_ok=True)
    return path


def _take_over(sup: Supervisor, session: str, how: str) -> tuple[str, int]:
    """Run the attack; the thread's verdict and the later cell's tool calls."""
    done = _work(sup, f"{session}.done")
    stolen = f"echo stolen-by-{session}"
    setup = sup.execute_code(
        TAKEOVER + f"start({str(done)!r}, {stolen!r}, {how!r})\n",
        profile="a",
        session=session,
        context="cron",
        run_id=f"{session}-cell-1",
    )
    assert setup.outcome == "ok", setup
    # Cell 2: its own command waits until the thread has had its answer.
    wait = f"while [ ! -e {done} ]; do sleep 0.05; done; echo cell-2"
    later = sup.execute_code(
        f"from multiplex.kernel import run\nr = run({wait!r})\n(r.outcome, r.stdout)",
        profile="a",
        session=session,
        context="cron",
        run_id=f"{session}-cell-2",
    )
    assert later.result == "('approved', 'cell-2\\n')", later
    commands = [row["command"] for row in _decisions(sup, "a")]
    assert stolen not in commands  # nothing was gated, so nothing is attributed to cell 2
    assert wait in commands
    return done.read_text(), later.tool_calls


def test_a_thread_that_copies_the_later_cells_token_is_refused(sup: Supervisor) -> None:
    # The attack exactly: the token in the thread attribute, then run().
    verdict, calls = _take_over(sup, "takeover-run", "run")
    assert verdict.startswith("refused: run() is answered on the cell's own thread only")
    assert calls == 1


def test_a_thread_that_sends_the_request_itself_is_refused_by_the_supervisor(
    sup: Supervisor,
) -> None:
    # The key and the token copied, the request sent and its reply awaited
    # exactly as the cell's own thread does: the supervisor sees another thread.
    verdict, calls = _take_over(sup, "takeover-raw", "raw")
    assert verdict == "refused: " + NOT_THE_CELLS_THREAD
    assert calls == 1


def test_a_thread_posing_as_the_main_thread_is_refused(sup: Supervisor) -> None:
    # What the kernel believes about threads is a lie; the supervisor does not
    # ask the kernel which thread it is.
    verdict, calls = _take_over(sup, "takeover-posing", "posing")
    assert verdict == "refused: " + NOT_THE_CELLS_THREAD
    assert calls == 1


def test_a_forked_process_of_the_kernel_is_refused(sup: Supervisor) -> None:
    # A child's own main thread is not the kernel's: the key and token copied by fork.
    verdict, calls = _take_over(sup, "takeover-fork", "fork")
    assert verdict == "refused: this request did not come from the kernel's own process"
    assert calls == 1


@pytest.mark.parametrize("how", ["run", "raw"])
def test_a_thread_started_by_the_running_cell_is_refused(sup: Supervisor, how: str) -> None:
    # The cell's own command waits until its thread has had its answer.
    done = _work(sup, f"own-thread-{how}.done")
    wait = f"while [ ! -e {done} ]; do sleep 0.05; done; echo from-the-cell"
    code = (
        TAKEOVER
        + "token = k._parent_token()\n"
        + "def worker(done):\n"
        + "    try:\n"
        + "        verdict = ('ran: ' + run('echo from-thread').outcome) if HOW == 'run'"
        + " else ask_raw(token, 'echo from-thread')\n"
        + "    except RequestRefused as exc:\n"
        + "        verdict = 'refused: ' + str(exc)\n"
        + "    tell(done, verdict)\n"
        + f"t = threading.Thread(target=worker, args=({str(done)!r},))\n"
        + "t.start()\n"
        + f"mine = run({wait!r}).stdout\n"
        + "t.join()\n"
        + f"(open({str(done)!r}).read(), mine)"
    )
    result = sup.execute_code(
        f"HOW = {how!r}\n" + code, profile="a", session=f"own-thread-{how}", context="cron"
    )
    assert result.outcome == "ok", result
    refusal = {
        "run": "run() is answered on the cell's own thread only",
        "raw": NOT_THE_CELLS_THREAD,
    }[how]
    assert result.result is not None
    verdict, mine = ast.literal_eval(result.result)
    assert verdict.startswith(f"refused: {refusal}") and mine == "from-the-cell\n"
    assert result.tool_calls == 1
    assert "echo from-thread" not in [row["command"] for row in _decisions(sup, "a")]


def test_an_async_cell_runs_commands_on_its_own_thread(sup: Supervisor) -> None:
    # ipykernel runs a cell with top-level await on the main thread's event loop.
    result = sup.execute_code(
        "import asyncio\n"
        "from multiplex.kernel import run\n"
        "async def step():\n"
        "    await asyncio.sleep(0)\n"
        "    return run('echo in-a-coroutine').stdout\n"
        "await step()",
        profile="a",
        session="async",
        context="cron",
    )
    assert result.result == "'in-a-coroutine\\n'", result
    assert result.tool_calls == 1


def test_a_cells_own_run_waits_even_under_a_default_socket_timeout(sup: Supervisor) -> None:
    # The reply is awaited in a blocking recvfrom, whatever the cell set for sockets.
    result = sup.execute_code(
        "import socket\n"
        "from multiplex.kernel import run\n"
        "socket.setdefaulttimeout(0.01)\n"
        "run('sleep 0.3; echo waited').stdout",
        profile="a",
        session="default-timeout",
        context="cron",
    )
    assert result.result == "'waited\\n'", result


def test_the_kernel_introduces_itself_once(sup: Supervisor) -> None:
    # A cell cannot name another process as the kernel once it has started.
    result = sup.execute_code(
        "import multiplex.kernel as k\nk._ask({'key': k._Channel.key, 'hello': True})",
        profile="a",
        session="hello-again",
    )
    assert result.result == "{'ok': False, 'refused': 'the kernel has introduced itself already'}"
