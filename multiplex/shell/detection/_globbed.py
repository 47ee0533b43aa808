"""Program words the shell expands as globs (docs/security.md#named-patterns).

``/???/r? -rf ~`` runs whatever file the glob matches when the line runs, ``/bin/rm``
among them: such a command is judged as each program the hardline checks know that
the glob may name (``rm -rf ~``: hardline), and asks as ``dynamic-program`` otherwise.
"""

from __future__ import annotations

import fnmatch
import functools

from multiplex.shell.detection._command_checks import HARDLINE_PROGRAMS

__all__ = ["globbed_programs", "is_glob_program"]


def is_glob_program(prog: str) -> bool:
    """A program word the shell expands as a glob (``/???/r?``, ``/b*/r[m]``); not the
    ``[`` and ``[[`` of tests."""
    return "*" in prog or "?" in prog or ("[" in prog and "]" in prog and prog not in ("[", "[["))


@functools.lru_cache(maxsize=256)
def globbed_programs(prog: str) -> tuple[str, ...]:
    """The programs the hardline checks know that the glob ``prog`` may name."""
    pattern = prog[prog.rfind("/") + 1 :]
    names = sorted({*HARDLINE_PROGRAMS, "mkfs"})
    return tuple(n for n in names if fnmatch.fnmatchcase(n, pattern))
