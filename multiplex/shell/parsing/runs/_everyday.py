"""Commands that run nothing beyond themselves, by program, options and operands (docs/security.md#inert-lines).

Most commands an agent sends are everyday ones: ``git status``, ``ls -la src``,
``make test``. :func:`everyday_words` knows, from a table made once, the
subcommands, options and operand shapes of a few such programs with which they
run no other program, load no code and write nothing outside the operands they
name: for an argv of those shapes it returns the words a check of paths, names
and hosts must still see (its operands), for any other argv None. The walk
(``shell.parsing._emitting``) does not look for what such a command runs (it
runs nothing), and the gate's first test for inert lines
(``shell.detection._inert``) builds on it. Anything outside the table is read
as before. A pure leaf: the stdlib and the parsed values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from multiplex.shell.parsing._parsed import SimpleCommand

__all__ = ["FILTERS", "WRITES_BY_OPTION", "everyday_words", "prints_fields", "runs_nothing"]

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
# Each reader's options, made once (a set built per call costs more than most reads).
_STATUS_FLAGS = frozenset({"--short", "--branch", "--porcelain", "--long"})
_DIFF_FLAGS = _REF_FLAGS | {"--cached", "--staged", "--numstat", "--no-color", "--color"}
_LOG_FLAGS = _REF_FLAGS | {"--graph", "--decorate", "--all", "--no-merges", "--reverse"}
_ADD_FLAGS = frozenset({"--all", "--update"})
_PUSH_FLAGS = frozenset({"--set-upstream"})
_FETCH_FLAGS = frozenset({"--all", "--prune"})
_PULL_FLAGS = frozenset({"--rebase", "--ff-only"})
_BRANCH_FLAGS = frozenset({"--list"})
_COUNT = {"-n": _NUMBER}
_GIT: dict[str, Reader] = {
    "status": lambda a: _words(a, letters="sb", flags=_STATUS_FLAGS),
    "diff": lambda a: _words(
        a,
        letters="w",
        flags=_DIFF_FLAGS,
    ),
    "log": lambda a: _words(
        a,
        letters="p0123456789",
        flags=_LOG_FLAGS,
        valued=_COUNT,
    ),
    "show": lambda a: _words(a, flags=_REF_FLAGS),
    "add": lambda a: _words(a, letters="Au", flags=_ADD_FLAGS),
    "commit": lambda a: _commit(a),
    "push": lambda a: _words(a, letters="u", flags=_PUSH_FLAGS, first=_NAME),
    "fetch": lambda a: _words(a, flags=_FETCH_FLAGS, operand=_NAME),
    "pull": lambda a: _words(a, flags=_PULL_FLAGS, operand=_path),
    "branch": lambda a: _words(a, letters="avr", flags=_BRANCH_FLAGS, operand=_never),
}


def _commit(args: Sequence[str]) -> list[str] | None:
    # Only with a message: without one git starts an editor.
    if "-m" not in args and "-am" not in args:
        return None
    return _words(args, letters="aq", valued=_MESSAGE, operand=_never)


_MESSAGE = {"-m": _TEXT, "-am": _TEXT}


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


_NPM_SAVE = frozenset({"--save-dev", "-D", "--save", "-S", "--save-exact", "-E"})


def _npm(args: Sequence[str]) -> list[str] | None:
    if len(args) == 2 and args[0] in ("run", "run-script") and _SCRIPT(args[1]):
        return [args[1]]
    if tuple(args) in (("test",), ("ci",)):
        return []
    if args and args[0] in ("install", "i"):
        return _words(args[1:], flags=_NPM_SAVE, operand=_PACKAGE)
    return None


_PIP_PACKAGE = _NAME
_EDITABLE = re.compile(r"\.(?:\[[a-z0-9_,-]+\])?").fullmatch


_PIP_FLAGS = frozenset({"--upgrade"})
_PIP_VALUED = {"-e": _EDITABLE}


def _pip(args: Sequence[str]) -> list[str] | None:
    if not args or args[0] != "install":
        return None
    words = _words(
        args[1:], letters="Uq", flags=_PIP_FLAGS, valued=_PIP_VALUED,
        operand=_PIP_PACKAGE,
    )  # fmt: skip
    # The extras of ".[test]" name no file: the first tests see the names alone.
    return None if words is None else [w.replace("[", " ").replace("]", " ") for w in words]


_CARGO_FLAGS = frozenset({"--release", "--all", "--workspace", "--all-targets", "--quiet"})


def _cargo(args: Sequence[str]) -> list[str] | None:
    if not args or args[0] not in ("build", "test", "check", "clippy", "fmt"):
        return None
    return _words(args[1:], letters="q", flags=_CARGO_FLAGS, operand=_never)


_JOBS = {"-j": _NUMBER}


def _make(args: Sequence[str]) -> list[str] | None:
    # Targets only: no NAME=VALUE (a variable may name a program), no -C, -f or --eval.
    return _words(args, letters="ks", valued=_JOBS, operand=_NAME)


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


_KUBE_FLAGS = frozenset({"-A", "--all-namespaces", "--show-labels"})
_KUBE_VALUED = {
    "-n": _KUBE_NAME,
    "--namespace": _KUBE_NAME,
    "-o": re.compile("wide|name").fullmatch,
}


def _kubectl(args: Sequence[str]) -> list[str] | None:
    if len(args) < 2 or args[0] != "get" or args[1] not in _KUBE_KINDS:
        return None
    return _words(args[2:], flags=_KUBE_FLAGS, valued=_KUBE_VALUED, operand=_KUBE_NAME)


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


_FIND_FLAGS = frozenset({"-print"})


def _find(args: Sequence[str]) -> list[str] | None:
    words = _words(args, flags=_FIND_FLAGS, valued=_FIND_TESTS)
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
prints_fields = _AWK_PRINT = re.compile(
    r"\{ ?print(?: \$[0-9]{1,2}(?:, ?\$[0-9]{1,2})*)? ?\}"
).fullmatch


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
    "head": (lambda a: _words(a, letters="0123456789", valued=_COUNT), True),
    "tail": (lambda a: _words(a, letters="0123456789", valued=_COUNT), True),
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


def _words_of(argv: Sequence[str]) -> list[str] | None:
    entry = _TABLE.get(argv[0]) if argv else None
    return None if entry is None else entry[0](argv[1:])


def everyday_words(cmd: SimpleCommand) -> list[str] | None:
    """The operands of a command of the table's shapes, or None (docs/security.md#inert-lines).

    Asked of a command once (the walk asks, then the gate's first test): kept in its memo
    (read here without ``once``, whose closure costs more than the reader on most lines)."""
    memo = cmd.memo
    if _KEY in memo:
        return memo[_KEY]  # type: ignore[return-value]
    found = memo[_KEY] = _words_of(cmd.argv)
    return found


_KEY = "everyday"


def runs_nothing(cmd: SimpleCommand) -> bool:
    """An everyday command the walk need not look into: all but awk, whose code it reads."""
    return cmd.program != "awk" and everyday_words(cmd) is not None


# The programs of the table that may read another stage's output.
FILTERS = frozenset(name for name, (_, filters) in _TABLE.items() if filters)
# Those of whose admitted options one writes a file (tar's f): an allow rule still asks
# why (docs/allowlist.md#what-an-allow-rule-never-covers).
WRITES_BY_OPTION = frozenset({"tar"})
