"""docs/kernels.md#speed: a cell the engine calls plain Python is one IPython's input transformation leaves as it is."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell

from multiplex.execution.kernels._plain import plain_python

CELLS = [
    "1+1",
    "x = 1  # what?",
    "exit",
    "exit()",
    "quit",
    "pwd",
    "ls",
    "cd",
    "x = 1\n\n",
    "x\n\t",
    "#\x0c!ls",
    's = """a\n   \nb"""',
    "exit\n\n",
    "exit\r\n",
    "\x0cexit",
    "\n1",
    "  1",
    "...",
    "In [1]: x",
    ">>> 1",
    "'''\n%pwd\n'''",
    "s = '%d' % 3",
    "a = 1 != 2",
    "x = !ls",
    "%pwd",
    "!ls",
    "x?",
    "%%time\n1",
    "def f():\n    ...\nf()",
    "print(1); pwd",
    "get_ipython",
    "lambda: 1",
]


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    return InteractiveShell.instance()  # type: ignore[no-any-return]


def _unchanged(shell: InteractiveShell, code: str) -> bool:
    return bool(shell.transform_cell(code) == (code if code.endswith("\n") else code + "\n"))


@pytest.mark.parametrize("code", CELLS)
def test_a_plain_cell_is_left_as_it_is(shell: InteractiveShell, code: str) -> None:
    if plain_python(shell, code):
        assert _unchanged(shell, code)


def test_magics_and_autocalls_are_not_plain(shell: InteractiveShell) -> None:
    for code in ("exit", "pwd", "%pwd", "!ls", "x?", "In [1]: x", "...", "await x"):
        assert not plain_python(shell, code), code
    assert plain_python(shell, "1+1") and plain_python(shell, "print(x)")


_PIECES = st.sampled_from(
    ["x", "exit", "pwd", "1", " ", "  ", "\n", "\r\n", "=", "!", "%", "?", "(", ")", "#",
     "'", '"', ":", ".", "...", ">>> ", "In [1]: ", "\x0c", "\t", "+", "ls", ","]
)  # fmt: skip


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_PIECES, max_size=8).map("".join))
def test_whatever_is_plain_is_left_as_it_is(shell: InteractiveShell, code: str) -> None:
    if plain_python(shell, code):
        assert _unchanged(shell, code), repr(code)
