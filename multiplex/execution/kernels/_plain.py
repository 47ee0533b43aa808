"""Which cells may skip IPython's input transformation (docs/kernels.md#speed).

Runs inside a session kernel, loaded by path beside ``_engine.py`` (the engine
never imports the multiplex package); the tests import it as a module.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from IPython.core.autocall import IPyAutocall
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.macro import Macro
from IPython.core.prefilter import _default_checkers
from IPython.core.splitinput import LineInfo

__all__ = ["plain_python"]


# The input transformers and prefilter checkers IPython sets up; a cell or an
# extension that adds one makes every cell go through transform_cell again.
_STOCK_INPUT = TransformerManager()  # type: ignore[no-untyped-call]
_STOCK_COUNTS = (
    len(_STOCK_INPUT.cleanup_transforms),
    len(_STOCK_INPUT.line_transforms),
    len(_STOCK_INPUT.token_transformers),
    len(_default_checkers),
)


# Line breaks to str.splitlines (which IPython's transformers use) but not to
# Python's tokenizer: a "line" after one could be taken for a magic.
_ODD_BREAK = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def plain_python(shell: Any, code: str) -> bool:
    """True when IPython's input transformation would leave ``code`` as it is.

    Conservative: anything IPython could rewrite (a prompt, leading blank lines
    or indentation, a line of only blanks, a form feed or another break only
    ``str.splitlines`` sees, magics and shell escapes, which do not parse as Python, a
    single line naming a magic, a macro or an autocall object such as ``exit``,
    autocall mode, a transformer or prefilter checker someone added) or that may
    need the event loop (``await``, ``async``) answers False, and the cell takes
    IPython's path.
    """
    manager = shell.input_transformer_manager
    counts = (
        len(manager.cleanup_transforms),
        len(manager.line_transforms),
        len(manager.token_transformers),
        len(shell.prefilter_manager.checkers),
    )
    if counts != _STOCK_COUNTS or shell.input_transformers_post:
        return False
    if "await" in code or "async" in code or _ODD_BREAK.search(code):
        return False
    lines = code.splitlines()
    if not lines or not lines[0].strip() or lines[0][0].isspace():
        return False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith((">>>", "...", "In [")) or (line and not stripped):
            return False  # a prompt; a line of blanks (IPython empties it)
    try:
        ast.parse(code)
    except Exception:  # IPython reports it, or its transformers make it Python
        return False
    if len(lines) == 1:
        return _plain_line(shell, lines[0])
    return True


def _plain_line(shell: Any, line: str) -> bool:
    # IPython's prefilter checkers for a single line (IPython.core.prefilter).
    prefilter = shell.prefilter_manager
    if shell.autocall or prefilter.transformers or line.endswith("# PYTHON-MODE"):
        return False
    name = LineInfo(line).ifun
    if not name:
        return True
    obj = shell.user_ns.get(name)
    if isinstance(obj, (Macro, IPyAutocall)):
        return False
    return not (shell.automagic and shell.find_magic(name))
