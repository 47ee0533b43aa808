"""docs/kernels.md#ownership: state persists within a session; sessions, profiles and child turns isolate."""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.execution.conftest import dead, pid_of


def test_state_persists_within_a_session(sup: Supervisor) -> None:
    first = sup.execute_code(
        "import csv\nrows = list(csv.DictReader(open('data.csv')))\nlen(rows)",
        profile="a",
        session="state",
        context="api",
    )
    assert first.outcome == "ok" and first.result == "3" and first.fresh_kernel
    second = sup.execute_code("print(sum(int(r['n']) for r in rows))", profile="a", session="state")
    assert second.outcome == "ok" and second.stdout == "6\n" and second.result is None
    assert not second.fresh_kernel and second.kernel_id == first.kernel_id
    assert second.execution_count == (first.execution_count or 0) + 1


def test_an_error_keeps_the_kernel(sup: Supervisor) -> None:
    sup.execute_code("kept = 'still here'", profile="a", session="errors")
    failed = sup.execute_code("1/0", profile="a", session="errors")
    assert failed.outcome == "error" and failed.error is not None
    assert failed.error.ename == "ZeroDivisionError" and failed.error.evalue == "division by zero"
    assert "1/0" in failed.error.traceback and "\x1b[" not in failed.error.traceback
    after = sup.execute_code("kept", profile="a", session="errors")
    assert after.result == "'still here'" and not after.fresh_kernel


def test_top_level_await_and_the_package_work_in_a_cell(sup: Supervisor) -> None:
    # docs/kernels.md#speed: one shell thread, and the package loads on first use.
    awaited = sup.execute_code(
        "import asyncio\nawait asyncio.sleep(0)\n'awaited'", profile="a", session="engine"
    )
    assert awaited.outcome == "ok" and awaited.result == "'awaited'"
    package = sup.execute_code(
        "import multiplex, multiplex.kernel\n"
        "from multiplex import ContextKind\n"
        "ContextKind.CRON.value, multiplex.kernel._Channel.key is not None",
        profile="a",
        session="engine",
    )
    assert package.outcome == "ok" and package.result == "('cron', True)", package


def test_a_subprocess_s_last_output_is_the_cell_s(sup: Supervisor) -> None:
    # Written to the kernel's fds just before the cell ends: still this cell's, in order.
    first = sup.execute_code(
        "import os\nos.system('printf one; printf two >&2')\nos.write(1, b' three')\n'end'",
        profile="a",
        session="fds",
    )
    assert first.outcome == "ok" and first.result == "'end'"
    assert first.stdout == "one three" and first.stderr == "two"
    later = sup.execute_code("'later'", profile="a", session="fds")
    assert later.stdout == "" and later.stderr == ""


def test_sessions_and_profiles_isolate(sup: Supervisor) -> None:
    sup.execute_code("only_in_s1 = 1", profile="a", session="iso-1")
    other_session = sup.execute_code("only_in_s1", profile="a", session="iso-2")
    other_profile = sup.execute_code("only_in_s1", profile="b", session="iso-1")
    for result in (other_session, other_profile):
        assert result.outcome == "error" and result.error is not None
        assert result.error.ename == "NameError"
    pids = {pid_of(sup, "a", "iso-1"), pid_of(sup, "a", "iso-2"), pid_of(sup, "b", "iso-1")}
    assert len(pids) == 3


def test_a_child_turn_gets_its_own_kernel(sup: Supervisor) -> None:
    sup.execute_code("parent_var = 'p'", profile="a", session="deleg")
    with sup.turn("a", "deleg", "api"):
        # Same profile and session, but delegated: never the parent's kernel.
        child = sup.execute_code("parent_var", profile="a", session="deleg")
        assert child.outcome == "error" and child.error is not None
        sup.execute_code("child_var = 'c'", profile="a", session="deleg")
        sibling = sup.execute_code("child_var", profile="a", session="deleg-sibling")
        assert sibling.error is not None and sibling.error.ename == "NameError"
        again = sup.execute_code("child_var", profile="a", session="deleg")
        assert again.result == "'c'"
    rows = [r for r in sup.kernels.kernels() if r["session"] == "deleg"]
    assert sorted(map(str, (r["chain"] for r in rows))) == ["['a/deleg']", "[]"]
    parent = sup.execute_code("parent_var", profile="a", session="deleg")
    assert parent.result == "'p'" and not parent.fresh_kernel


def test_reset_discards_state(sup: Supervisor) -> None:
    sup.execute_code("gone = 1", profile="a", session="reset")
    old = pid_of(sup, "a", "reset")
    result = sup.execute_code("'gone' in dir()", profile="a", session="reset", reset=True)
    assert (
        result.result == "False"
        and result.fresh_kernel
        and result.notice == "a fresh kernel: reset"
    )
    assert dead(old) and pid_of(sup, "a", "reset") != old


def test_session_reset_disposes_the_sessions_kernels(sup: Supervisor) -> None:
    sup.execute_code("x = 1", profile="a", session="boundary")
    with sup.turn("a", "boundary", "api"):
        sup.execute_code("y = 1", profile="a", session="child-of-boundary")
    pids = [int(str(r["pid"])) for r in sup.kernels.kernels() if "boundary" in str(r)]
    assert len(pids) == 2
    sup.reset_session("a", "boundary")
    assert dead(*pids)
    assert not [r for r in sup.kernels.kernels() if "boundary" in str(r)]
    fresh = sup.execute_code("'x' in dir()", profile="a", session="boundary")
    assert fresh.result == "False" and fresh.fresh_kernel


def test_code_of_a_non_local_backend_is_refused(sup: Supervisor) -> None:
    result = sup.execute_code("1+1", profile="dock", session="s")
    assert result.outcome == "refused" and result.error is not None
    assert "local backend" in result.error.evalue


@pytest.mark.parametrize("code", ["import sys; sys.exit()", "import sys; sys.exit(0)", "exit()"])
def test_sys_exit_ends_the_kernel_cleanly(sup: Supervisor, code: str) -> None:
    sup.execute_code("v = 1", profile="b", session="exit")
    pid = pid_of(sup, "b", "exit")
    ended = sup.execute_code(code, profile="b", session="exit")
    assert ended.outcome == "exited" and ended.error is None and ended.stderr == ""
    assert ended.notice is not None and "the kernel ended" in ended.notice
    assert dead(pid)
    after = sup.execute_code("'v' in dir()", profile="b", session="exit")
    assert after.result == "False" and after.fresh_kernel
    assert after.notice is not None and after.notice.startswith("a fresh kernel: the kernel ended")


def test_sys_exit_with_an_error_code_reports_it(sup: Supervisor) -> None:
    ended = sup.execute_code("import sys; sys.exit(3)", profile="b", session="exit3")
    assert ended.outcome == "exited" and ended.error is not None and ended.error.evalue == "3"


def test_a_missing_working_directory_is_refused_in_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import write_home

    write_home(tmp_path / "profiles", "lost", "terminal:\n  cwd: /nonexistent/mx-kernel-cwd\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\n")
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    try:
        result = sup.execute_code("1", profile="lost", session="s")
    finally:
        sup.close()
    assert result.outcome == "refused" and result.error is not None
    assert result.error.evalue == "working directory does not exist: /nonexistent/mx-kernel-cwd"


_SAME_CELLS = [
    "1+1",
    "x = 5",
    "x",
    "print('hi'); x * 2",
    "None",
    "{'b': 1, 'a': [1] * 30}",
    "_",
    "'%d' % 3",
    "y = 1 != 2\ny",
    "import sys\nprint('e', file=sys.stderr)\n'r'",
    "1/0",
    "def f():\n    raise ValueError('bad')\nf()",
    "pwd",
    "In[-1]",
    "get_ipython().run_cell('%pwd').result",
    "exit",  # last: it ends both kernels
]


def test_plain_python_cells_answer_as_ipython_does(sup: Supervisor) -> None:
    # docs/kernels.md#speed: a plain-Python cell skips IPython's input
    # transformation; the same cells where a transformer forces IPython's path.
    probe = "type(get_ipython().__dict__.get('transform_cell')).__name__"
    sup.execute_code("0", profile="a", session="fast")
    sup.execute_code(
        "get_ipython().input_transformers_post.append(lambda lines: lines)",
        profile="a",
        session="stock",
    )
    assert sup.execute_code(probe, profile="a", session="fast").result == "'function'"
    assert sup.execute_code(probe, profile="a", session="stock").result == "'NoneType'"
    for code in _SAME_CELLS:
        fast = sup.execute_code(code, profile="a", session="fast")
        stock = sup.execute_code(code, profile="a", session="stock")
        got = (fast.outcome, fast.result, fast.stdout, fast.stderr, fast.error)
        want = (stock.outcome, stock.result, stock.stdout, stock.stderr, stock.error)
        assert got == want, code
        assert fast.execution_count == stock.execution_count, code


def test_a_cell_that_flushes_thousands_of_times_gets_all_of_its_output(sup: Supervisor) -> None:
    # Each flush queues one IOPub message; past the event pipe's high-water mark
    # the cell waits for the IOPub thread, which must never wait for the cell.
    code = "import sys\nfor i in range(5000):\n    print(i, flush=True)\n    print(-i, file=sys.stderr, flush=True)\n'done'"
    r = sup.execute_code(code, profile="a", session="flood", timeout=120)
    assert r.outcome == "ok" and r.result == "'done'" and r.notice is None
    assert r.stdout.split() == [str(i) for i in range(5000)]
    assert r.stderr.split() == [str(-i) for i in range(5000)]


def test_every_kind_of_output_is_the_cells_own_and_in_order(sup: Supervisor) -> None:
    # docs/kernels.md#speed: the reply counts the IOPub messages queued before it;
    # the cell settles once it holds them all, and the next cell sees none of them.
    code = (
        "import sys, threading\n"
        "print('first', flush=True)\n"
        "t = threading.Thread(target=lambda: print('thread', flush=True))\n"
        "t.start(); t.join()\n"
        "display('shown')\n"
        "print('err', file=sys.stderr)\n"
        "print('last')\n"
        "41 + 1"
    )
    r = sup.execute_code(code, profile="a", session="kinds")
    assert (r.outcome, r.result) == ("ok", "42")
    assert r.stdout == "first\nthread\n'shown'\nlast\n" and r.stderr == "err\n"
    quiet = sup.execute_code("None", profile="a", session="kinds")
    assert (quiet.stdout, quiet.stderr, quiet.result) == ("", "", None)
