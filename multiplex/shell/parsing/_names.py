"""Builtins that take a variable's name, and evaluate the code in its subscript (docs/security.md#code-carriers).

bash evaluates an indexed array's subscript as arithmetic, and expands ``$(…)`` and
backticks in it first, wherever it is given a name: ``printf -v 'a[$(cmd)]' x``,
``read 'a[$(cmd)]'``, ``declare 'a[$(cmd)]=1'``, ``local``, ``typeset``, ``readonly``,
``test -v``/``[ -v``/``[[ -v`` (in ``_walker.py``), ``getopts OPTS NAME``, ``wait -p NAME``, ``mapfile``'s array
(each checked in a real bash). The word is quoted, so it is text to the parser;
:func:`names_step` hands the commands in such subscripts back as lines. It also hands
back ``mapfile -C CALLBACK`` (bash runs the callback every ``-c`` lines) and the
command ``history -s CMD`` puts where ``fc -s`` runs it again. A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from multiplex.shell.parsing._argv import NextStep

__all__ = ["NAME_TAKERS", "names_step", "subscript_code"]

NAME_TAKERS = frozenset(
    {"printf", "read", "mapfile", "readarray", "declare", "typeset", "local", "readonly",
     "test", "[", "getopts", "wait", "history"}
)  # fmt: skip
# NAME[ … $(…) or `…` … ]: the subscript's commands.
_SUBSCRIPT = re.compile(r"\w\[([^\]]*(?:\$\(|`)[^\]]*)\]")
_BACKTICKS = re.compile(r"`([^`]*)`")


def names_step(prog: str, args: Sequence[str]) -> NextStep:
    """The lines a name-taking builtin runs: its names' subscripts, mapfile's callback,
    history's added command."""
    lines: list[str] = []
    if prog in ("mapfile", "readarray"):
        lines += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-C"]
        lines += [a[2:] for a in args if a.startswith("-C") and len(a) > 2]
    elif prog == "history" and args[:1] == ("-s",):
        lines.append(" ".join(args[1:]))
    for arg in args:
        lines += subscript_code(arg)
    return NextStep(shell_payloads=tuple(line for line in lines if line.strip()))


def subscript_code(word: str) -> list[str]:
    """The commands in the subscripts of ``word`` (``a[$(cmd)]``, ``a[`cmd`]``)."""
    if "[" not in word:
        return []
    found: list[str] = []
    for sub in _SUBSCRIPT.finditer(word):
        inside = sub.group(1)
        found += _BACKTICKS.findall(inside)
        start, end = inside.find("$("), inside.rfind(")")
        if 0 <= start < end:  # from the first $( to the last ): nested ones stay inside
            found.append(inside[start + 2 : end])
    return [line for line in found if line.strip()]
