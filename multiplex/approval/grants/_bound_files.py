"""The workspace files a command runs, which an "always" answer binds its rule to (docs/allowlist.md#bindings).

Approving ``python3 build.py`` "always" approves what ``build.py`` says today,
not whatever an agent writes into it later. So the rule an "always" answer
saves is bound to the files of the cwd that the command runs:

- a script given to an interpreter (``python3 build.py``, ``bash ./run.sh``,
  ``node tools/x.js``), or run by its path (``./deploy.sh``);
- ``make``: the makefile it reads (``-f FILE``, else ``GNUmakefile``,
  ``makefile`` or ``Makefile``);
- ``npm``/``pnpm``/``yarn`` ``run``/``test``/``start``…: ``package.json``;
- ``pytest``/``python -m pytest``: the ``conftest.py`` files under the cwd.

Only regular files inside the cwd are bound; a command that runs nothing from
the workspace saves a plain rule.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path

from multiplex.profiles import binding_digest
from multiplex.shell import ParsedLine, parse_rule

__all__ = ["bindings_for", "files_run", "script_index"]

_PYTHON = re.compile(r"python(3(\.\d+)?)?")
_INTERPRETERS = frozenset(
    {"bash", "sh", "zsh", "dash", "ksh", "node", "ruby", "perl", "php", "lua", "Rscript", "bun"}
)
_INLINE = frozenset({"-c", "-e", "--eval", "-r", "-E"})  # code on the line, no script file
# Options whose value is the next word, not the script (python3 -W ignore build.py,
# bash -o errexit run.sh, node --require x.js app.js, ruby -I lib app.rb).
_VALUED = frozenset(
    {"-W", "-X", "--check-hash-based-pycs", "-o", "-O", "+o", "+O", "--rcfile",
     "--init-file", "--require", "--import", "--loader", "-I", "-C"}
)  # fmt: skip
_PACKAGE_RUNNERS = frozenset({"npm", "pnpm", "yarn"})
_PACKAGE_VERBS = frozenset(
    {"run", "run-script", "rum", "urn", "test", "t", "tst", "start", "stop", "restart"}
)
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAX_CONFTESTS = 64
_SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox"})


def _inside(cwd: Path, word: str) -> str | None:
    """``word`` as a name relative to ``cwd`` if it is a regular file inside it."""
    path = Path(posixpath.normpath(word if os.path.isabs(word) else str(cwd / word)))
    try:
        relative = path.relative_to(cwd)
    except ValueError:
        return None
    if not relative.parts or not path.is_file() or path.is_symlink():
        return None
    return str(relative)


def _script(args: Sequence[str], cwd: Path, python: bool) -> list[str]:
    skip = False
    for index, word in enumerate(args):
        if skip:  # an option's value
            skip = False
            continue
        if word in _VALUED:
            skip = True
            continue
        if word in _INLINE:
            return []
        if python and word == "-m":
            module = args[index + 1] if index + 1 < len(args) else ""
            return _conftests(cwd) if module == "pytest" else []
        if word == "--":
            continue
        if not word.startswith("-"):
            found = _inside(cwd, word)
            return [found] if found else []
    return []


def _make(args: Sequence[str], cwd: Path) -> list[str]:
    for index, word in enumerate(args):
        if word in ("-f", "--file", "--makefile") and index + 1 < len(args):
            found = _inside(cwd, args[index + 1])
            return [found] if found else []
        if word.startswith(("--file=", "--makefile=")):
            found = _inside(cwd, word.split("=", 1)[1])
            return [found] if found else []
        if word.startswith("-f") and len(word) > 2:
            found = _inside(cwd, word[2:])
            return [found] if found else []
    for name in _MAKEFILES:
        found = _inside(cwd, name)
        if found:
            return [found]
    return []


def _conftests(cwd: Path) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(cwd):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        if "conftest.py" in files:
            name = _inside(cwd, os.path.join(folder, "conftest.py"))
            if name:
                found.append(name)
            if len(found) >= _MAX_CONFTESTS:
                break
    return found


def script_index(argv: Sequence[str]) -> int | None:
    """Where in ``argv`` an interpreter's script is (``python3 -W ignore build.py``: 3), or
    None: a rule must keep that word exact, or it would run any other file too."""
    program = posixpath.basename(argv[0]) if argv else ""
    if not (_PYTHON.fullmatch(program) or program in _INTERPRETERS):
        return None
    skip = False
    for index, word in enumerate(argv[1:], 1):
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif word in _INLINE or word == "-m":
            return None  # code on the line, or a module: no script
        elif word != "--" and not word.startswith(("-", "+")):
            return index
    return None


def files_run(argv: Sequence[str], cwd: Path) -> list[str]:
    """The files of ``cwd`` (names relative to it) that ``argv`` runs, as listed above."""
    if not argv:
        return []
    program = posixpath.basename(argv[0])
    args = argv[1:]
    if "/" in argv[0]:
        own = _inside(cwd, argv[0])
        if own:
            return [own]
    if _PYTHON.fullmatch(program) or program in _INTERPRETERS:
        return _script(args, cwd, python=program.startswith("python"))
    if program == "make":
        return _make(args, cwd)
    if program in _PACKAGE_RUNNERS and args and args[0] in _PACKAGE_VERBS:
        found = _inside(cwd, "package.json")
        return [found] if found else []
    if program in ("pytest", "py.test"):
        return _conftests(cwd)
    return []


def bindings_for(rule: str, parsed: ParsedLine, cwd: Path | None) -> dict[str, str]:
    """The files (name: ``sha256:<hex>``) an "always" answer binds ``rule`` to: those run by
    the commands of ``parsed`` that ``rule`` matches."""
    if cwd is None or parsed.error is not None:
        return {}
    matcher = parse_rule(rule)
    bound: dict[str, str] = {}
    for command in parsed.commands:
        argv = command.assignments + command.argv
        if not matcher.matches(argv):
            continue
        for name in files_run(command.argv, cwd):
            digest = binding_digest(name, cwd)
            if digest is not None:
                bound[name] = digest
    return bound
