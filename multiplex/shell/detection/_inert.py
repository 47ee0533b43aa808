"""Lines no check can find anything in, told apart before the checks run (docs/security.md#inert-lines).

Most lines an agent sends are ``git status``, ``ls -la src``, ``cat src/main.py |
head -50``, ``make build && make test``: each check family of the gate would look
at every command of such a line and find nothing, and together they cost most of
a decision. :func:`inert` proves that from a table made once, in a few
microseconds, so the gate can skip them. It holds only when ALL of these hold:

- the line was read as plain words (``shell.parsing._plain``: no expansion,
  substitution, glob, redirection, assignment, here-document or control flow;
  ``ParsedLine.plain``) and nothing else was found in it (no fork bomb, no payload
  but awk's printing of fields);
- every command is a program of :data:`_TABLE` run directly (no wrapper), with
  only the subcommands and options its entry lists and operands of the shapes it
  allows; a program that reads standard input from another stage only where its
  entry says it may (a filter, never an interpreter);
- every operand is a relative path below the turn's folder (no ``..``, no part
  that starts with a dot, no ``/`` at its start), or a plain name or number;
- no word holds what any family's own first test looks for: a secret store's
  key (with the folder it is read in), a persistence place, a sensitive file's
  name, a metadata service's name, destructive SQL, a protected file of the
  profile;
- the turn's folder lies below one of the profile's own homes, in no part
  starting with a dot, and holds no other profile's home or profiles folder.

Anything else goes through every check, as before. ``tests/shell/test_inert.py``
checks, over every line of the gate's tests and generated lines of the table's
programs with hostile words, that no line :func:`inert` admits is one where any
check finds something. A pure leaf: stdlib and the detection leaves it imports.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence

from multiplex.shell.detection._scripts import sql_text
from multiplex.shell.detection.network._metadata import metadata_text
from multiplex.shell.detection.paths._protected import protected_globs
from multiplex.shell.detection.paths._secret_paths import (
    STARTUP,
    is_persistence_path,
    may_hold_secret,
    persistence_key,
)
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.detection.paths._writes import SENSITIVE_NAMES
from multiplex.shell.parsing._parsed import ParsedLine

__all__ = ["inert"]

# The shape of a word: a predicate (a compiled pattern's fullmatch, or a function).
Shape = Callable[[str], object]
_PATH_CHARS = re.compile(r"[A-Za-z0-9_./-]+")
_BAD_PART = re.compile(r"(?:^|/)[./-]")  # a part starting with "." or "-", "//", a "/" first


def _path(word: str) -> bool:
    """A relative path below the folder: parts that start with a letter, digit or "_"."""
    if word == ".":
        return True
    rest = word[2:] if word.startswith("./") else word
    return _PATH_CHARS.fullmatch(rest) is not None and _BAD_PART.search(rest) is None


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*").fullmatch
_NUMBER = re.compile(r"[0-9]{1,6}").fullmatch
# A commit message or a grep pattern: words of letters and punctuation, no "/" or quote,
# starting as a name does (not "..", which the checks read as a path, nor an option).
_TEXT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _.,:+@%=-]{0,199}").fullmatch
_IDENT = re.compile(r"[A-Za-z0-9_]+").fullmatch


def _test_operand(word: str) -> bool:
    """A test file, or a test id: its path, "::" and a name."""
    path, _, name = word.partition("::")
    return _path(path) and (not name or _IDENT(name) is not None)


def _never(word: str) -> bool:
    return False


# What an entry's reader returns: the words the families' first tests must see, or
# None when the arguments are not all of the entry's shapes.
Reader = Callable[[Sequence[str]], "list[str] | None"]


def _words(
    args: Sequence[str],
    *,
    letters: str = "",
    flags: frozenset[str] = frozenset(),
    valued: Mapping[str, Shape] | None = None,
    operand: Shape = _path,
    first: Shape | None = None,
    most: int = 1000,
) -> list[str] | None:
    """Options (a cluster of ``letters``, one of ``flags``, or one of ``valued`` and its value
    in the next word), then operands; ``first``, when given, is the shape of the first
    operand (a grep pattern), ``operand`` of the rest, at most ``most`` of them (uniq's
    second one is a file it writes). Options after operands are allowed."""
    out: list[str] = []
    pending: Shape | None = None
    seen_first = first is None
    for arg in args:
        if pending is not None:
            if not pending(arg):
                return None
            out.append(arg)
            pending = None
        elif arg[:1] == "-" and arg != "-":
            if arg in flags:
                continue
            if valued is not None and arg in valued:
                pending = valued[arg]
                continue
            if not letters or len(arg) < 2 or arg[1] == "-" or arg.strip("-" + letters):
                return None
        elif not seen_first:
            if first is None or not first(arg):
                return None
            out.append(arg)
            seen_first = True
        elif most > 0 and operand(arg):
            out.append(arg)
            most -= 1
        else:
            return None
    return None if pending is not None else out


def _git(args: Sequence[str]) -> list[str] | None:
    if not args:
        return None
    entry = _GIT.get(args[0])
    return None if entry is None else entry(args[1:])


_REF_FLAGS = frozenset({"--stat", "--oneline", "--name-only", "--name-status", "--shortstat"})
_GIT: dict[str, Reader] = {
    "status": lambda a: _words(
        a, letters="sb", flags=frozenset({"--short", "--branch", "--porcelain", "--long"})
    ),
    "diff": lambda a: _words(
        a,
        letters="w",
        flags=_REF_FLAGS | {"--cached", "--staged", "--numstat", "--no-color", "--color"},
    ),
    "log": lambda a: _words(
        a,
        letters="p0123456789",
        flags=_REF_FLAGS | {"--graph", "--decorate", "--all", "--no-merges", "--reverse"},
        valued={"-n": _NUMBER},
    ),
    "show": lambda a: _words(a, flags=_REF_FLAGS),
    "add": lambda a: _words(a, letters="Au", flags=frozenset({"--all", "--update"})),
    "commit": lambda a: _commit(a),
    "push": lambda a: _words(a, letters="u", flags=frozenset({"--set-upstream"}), first=_NAME),
    "fetch": lambda a: _words(a, flags=frozenset({"--all", "--prune"}), operand=_NAME),
    "pull": lambda a: _words(a, flags=frozenset({"--rebase", "--ff-only"}), operand=_path),
    "branch": lambda a: _words(a, letters="avr", flags=frozenset({"--list"}), operand=_never),
}


def _commit(args: Sequence[str]) -> list[str] | None:
    # Only with a message: without one git starts an editor.
    if "-m" not in args and "-am" not in args:
        return None
    return _words(args, letters="aq", valued={"-m": _TEXT, "-am": _TEXT}, operand=_never)


def _python(args: Sequence[str]) -> list[str] | None:
    return _pytest(args[2:]) if tuple(args[:2]) == ("-m", "pytest") else None


_PYTEST_FLAGS = frozenset(
    {"--lf", "--ff", "--no-header", "--tb=short", "--tb=line", "--tb=no", "--tb=long"}
)


def _pytest(args: Sequence[str]) -> list[str] | None:
    return _words(args, letters="qvxsl", flags=_PYTEST_FLAGS, operand=_test_operand)


_SCRIPT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_:.-]*").fullmatch
_PACKAGE = re.compile(
    r"(?:@[a-z0-9_][a-z0-9_.-]*/)?[a-z0-9_][a-z0-9_.-]*(?:@[0-9][0-9.]*)?"
).fullmatch


def _npm(args: Sequence[str]) -> list[str] | None:
    if len(args) == 2 and args[0] in ("run", "run-script") and _SCRIPT(args[1]):
        return [args[1]]
    if tuple(args) in (("test",), ("ci",)):
        return []
    if args and args[0] in ("install", "i"):
        flags = frozenset({"--save-dev", "-D", "--save", "-S", "--save-exact", "-E"})
        return _words(args[1:], flags=flags, operand=_PACKAGE)
    return None


_PIP_PACKAGE = _NAME
_EDITABLE = re.compile(r"\.(?:\[[a-z0-9_,-]+\])?").fullmatch


def _pip(args: Sequence[str]) -> list[str] | None:
    if not args or args[0] != "install":
        return None
    words = _words(
        args[1:], letters="Uq", flags=frozenset({"--upgrade"}), valued={"-e": _EDITABLE},
        operand=_PIP_PACKAGE,
    )  # fmt: skip
    # The extras of ".[test]" name no file: the first tests see the names alone.
    return None if words is None else [w.replace("[", " ").replace("]", " ") for w in words]


def _cargo(args: Sequence[str]) -> list[str] | None:
    if not args or args[0] not in ("build", "test", "check", "clippy", "fmt"):
        return None
    flags = frozenset({"--release", "--all", "--workspace", "--all-targets", "--quiet"})
    return _words(args[1:], letters="q", flags=flags, operand=_never)


def _make(args: Sequence[str]) -> list[str] | None:
    # Targets only: no NAME=VALUE (a variable may name a program), no -C, -f or --eval.
    return _words(args, letters="ks", valued={"-j": _NUMBER}, operand=_NAME)


def _docker(args: Sequence[str]) -> list[str] | None:
    if args and args[0] in ("ps", "images"):
        return _words(args[1:], letters="aq", operand=_never)
    return None


_KUBE_KINDS = frozenset(
    {"pods", "pod", "po", "deployments", "deployment", "deploy", "services", "service", "svc",
     "nodes", "node", "no", "namespaces", "ns", "events", "ev", "jobs", "cronjobs", "ingress",
     "ing", "replicasets", "rs", "statefulsets", "sts", "daemonsets", "ds"}
)  # fmt: skip
_KUBE_NAME = re.compile(r"[a-z0-9][a-z0-9.-]*").fullmatch


def _kubectl(args: Sequence[str]) -> list[str] | None:
    if len(args) < 2 or args[0] != "get" or args[1] not in _KUBE_KINDS:
        return None
    flags = frozenset({"-A", "--all-namespaces", "--show-labels"})
    valued = {"-n": _KUBE_NAME, "--namespace": _KUBE_NAME, "-o": re.compile("wide|name").fullmatch}
    return _words(args[2:], flags=flags, valued=valued, operand=_KUBE_NAME)


_FIND_NAME = re.compile(
    r"\*?[A-Za-z0-9_.][A-Za-z0-9_.-]*"
).fullmatch  # never an option: -name -delete
_FIND_TESTS = {
    "-name": _FIND_NAME,
    "-iname": _FIND_NAME,
    "-type": re.compile(r"[fdl]").fullmatch,
    "-maxdepth": _NUMBER,
    "-mindepth": _NUMBER,
}


def _find(args: Sequence[str]) -> list[str] | None:
    words = _words(args, flags=frozenset({"-print"}), valued=_FIND_TESTS)
    # "*.py" matches names in the tree; the first tests see the name without its "*".
    return None if words is None else [w.lstrip("*") for w in words]


_SED_PRINT = re.compile(r"[0-9]{1,6}(?:,[0-9]{1,6})?p").fullmatch


def _sed(args: Sequence[str]) -> list[str] | None:
    if len(args) < 2 or args[0] != "-n" or not _SED_PRINT(args[1]):
        return None
    return _words(args[2:])


def _cp(args: Sequence[str]) -> list[str] | None:
    # Sources and the target (the last): each a path below the folder, screened alike.
    words = _words(args, letters="rRpfv")
    return words if words is not None and len(words) >= 2 else None


_TAR_CREATE = re.compile(r"-?c[zjJv]{0,3}f").fullmatch  # create, into the next word's file


def _tar(args: Sequence[str]) -> list[str] | None:
    if len(args) < 3 or not _TAR_CREATE(args[0]):
        return None
    words = [arg for arg in args[1:] if _path(arg)]
    return words if len(words) == len(args) - 1 else None


# A path into the document: .a.b[] (no builtin, no variable, no file read by jq itself).
_JQ_KEY = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*)?(?:\[\])?").fullmatch


def _jq_path(text: str) -> bool:
    keys = text.split(".")
    return len(keys) > 1 and not keys[0] and all(map(_JQ_KEY, keys[1:])) and "" not in keys[2:]


def _jq(args: Sequence[str]) -> list[str] | None:
    words = _words(args, letters="rcS", first=_jq_path)
    # The filter's names name no file: the first tests see them without the brackets.
    return None if not words else [words[0].replace("[]", ""), *words[1:]]


# awk printing fields: nothing else (no system, getline, redirection, variable).
_AWK_PRINT = re.compile(r"\{ ?print(?: \$[0-9]{1,2}(?:, ?\$[0-9]{1,2})*)? ?\}").fullmatch


def _awk(args: Sequence[str]) -> list[str] | None:
    if not args or not _AWK_PRINT(args[0]):
        return None
    return _words(args[1:])


def _bare(args: Sequence[str]) -> list[str] | None:
    return None if args else []


_GREP_LETTERS = "rRnilcvwEFhHoqs"
# Each program's reader, and whether it may read another stage's output (a filter).
_TABLE: dict[str, tuple[Reader, bool]] = {
    "git": (_git, False),
    "ls": (lambda a: _words(a, letters="lahAtrSd1F"), False),
    "cat": (lambda a: _words(a, letters="n"), True),
    "head": (lambda a: _words(a, letters="0123456789", valued={"-n": _NUMBER}), True),
    "tail": (lambda a: _words(a, letters="0123456789", valued={"-n": _NUMBER}), True),
    "wc": (lambda a: _words(a, letters="lwcm"), True),
    "sort": (lambda a: _words(a, letters="nruh"), True),
    "uniq": (lambda a: _words(a, letters="cdu", most=1), True),
    "grep": (lambda a: _words(a, letters=_GREP_LETTERS, first=_TEXT), True),
    "find": (_find, False),
    "sed": (_sed, True),
    "mkdir": (lambda a: _words(a, letters="p"), False),
    "cp": (_cp, False),
    "tar": (_tar, False),
    "jq": (_jq, True),
    "awk": (_awk, True),
    "python": (_python, False),
    "python3": (_python, False),
    "pytest": (_pytest, False),
    "npm": (_npm, False),
    "pip": (_pip, False),
    "pip3": (_pip, False),
    "cargo": (_cargo, False),
    "make": (_make, False),
    "docker": (_docker, False),
    "kubectl": (_kubectl, False),
    "pwd": (_bare, False),
    "true": (_bare, False),
    "whoami": (_bare, False),
}


def inert(parsed: ParsedLine, place: Place, protected: tuple[str, ...]) -> bool:
    """Whether no check of steps 2 and 5-7 can find anything in ``parsed`` at ``place``."""
    if not parsed.plain or parsed.error is not None or parsed.over_limit is not None:
        return False
    if parsed.fork_bombs or parsed.variant_commands:
        return False
    # Code the checks read as a script: only awk printing fields, in which none finds anything.
    if parsed.script_payloads and not all(map(_AWK_PRINT, parsed.script_payloads)):
        return False
    rel = _neutral(place)
    if rel is None:
        return False
    words: list[str] = []
    for cmd in parsed.commands:
        entry = _TABLE.get(cmd.argv[0]) if cmd.argv else None
        if entry is None or cmd.wrapped_by or cmd.assignments or cmd.redirects:
            return False
        reader, filters = entry
        if cmd.upstream and not filters:
            return False
        found = reader(cmd.argv[1:])
        if found is None:
            return False
        words += found
    if not words:
        return True
    joined = "\n".join(words)
    if may_hold_secret(words, place) or sql_text(joined) or metadata_text(joined):
        return False
    globs = protected_globs(protected) if protected else None
    for word in words:
        bare = word[2:] if word[:2] == "./" else word
        bare = bare.rstrip("/") or bare
        name = bare[bare.rfind("/") + 1 :]
        # A relative path with no part starting with a dot is sensitive, or a start-up
        # file, by its last part alone (docs/security.md#inert-lines).
        if name in _NAMED:
            return False
        if globs is not None and (globs.match(name) or globs.match(bare) or globs.match(word)):
            return False
    # Each word where it is read: a key may take in the folder's own name (~/x/bin/…).
    placed = [f"{rel}/{word}" for word in words]
    return not persistence_key("\n".join(placed)) or not any(map(is_persistence_path, placed))


_NAMED = SENSITIVE_NAMES | STARTUP


@functools.lru_cache(maxsize=64)
def _neutral(place: Place) -> str | None:
    """The turn's folder in ``~/…`` form when it is one :func:`inert` may judge at, else None."""
    cwd = place.cwd
    if not cwd or not cwd.startswith("/"):
        return None
    norm = posixpath.normpath(cwd)
    below = [h for h in place.normal_homes if norm.startswith(h.rstrip("/") + "/")]
    if not below:
        return None
    rel = norm[len(max(below, key=len).rstrip("/")) :]
    if "/." in rel or persistence_key(f"~{rel}/"):
        return None
    # No other home at, above or below it; no profiles folder at or below it.
    for other in map(posixpath.normpath, place.others):
        if norm == other or norm.startswith(other + "/") or other.startswith(norm + "/"):
            return None
    for folder in map(posixpath.normpath, place.profiles_dirs):
        if norm == folder or folder.startswith(norm + "/"):
            return None
    return "~" + rel
