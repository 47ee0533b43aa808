"""Reading argv words: where options end, an option's value, text fed to stdin (docs/approvals.md#parsing).

Shared by the unwrapping of wrappers (``shell.parsing.runs._unwrap``), of programs that carry
code (``shell.parsing.runs._payloads``) and by the catalogue's checks (``program``, ``operands``,
``short_flags``: one C-level pass over an argv of any length). A pure leaf: stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "ASSIGN",
    "FLOOD",
    "FOLDER",
    "MAX_UPSTREAM",
    "URL_NAME",
    "NextStep",
    "RedirectLike",
    "after_options",
    "fed_text",
    "feed_upstream",
    "first_operand",
    "git_elsewhere",
    "git_subcommand",
    "has_long",
    "huge_count",
    "landed_in",
    "leaves_cwd",
    "names",
    "operand_index",
    "operands",
    "option_given",
    "option_value",
    "option_values",
    "opts",
    "positional",
    "program",
    "program_name",
    "short_flags",
    "target_directory",
]

ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def names(text: str) -> tuple[str, ...]:
    """The words of ``text``, in order (tables written as one string)."""
    return tuple(text.split())


def opts(text: str) -> frozenset[str]:
    return frozenset(text.split())


class RedirectLike(Protocol):
    @property
    def op(self) -> str: ...
    @property
    def target(self) -> str: ...


@dataclass(frozen=True, slots=True)
class NextStep:
    """What an argv runs beyond itself."""

    inner: tuple[str, ...] | None = None  # the wrapped program's argv
    shell_payloads: tuple[str, ...] = ()  # shell code to parse recursively
    sub_commands: tuple[tuple[str, ...], ...] = ()  # find -exec …, more xargs runs
    scripts: tuple[str, ...] = ()  # python/node/perl/ruby/awk code, scanned as text


def program_name(word: str) -> str:
    """The basename of a program word, lower-cased (matching ignores case)."""
    return word[word.rfind("/") + 1 :].lower()


def operand_index(
    args: Sequence[str], with_arg: frozenset[str], *, assignments: bool = False
) -> int:
    """Index of the first operand after options (and NAME=VALUE words if allowed)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return i + 1
        if assignments and ASSIGN.match(arg):
            i += 1
        elif arg.startswith("--"):
            i += 2 if arg in with_arg else 1
        elif arg.startswith("-") and len(arg) > 1:
            takes_next = False
            for j, ch in enumerate(arg[1:], 1):
                if "-" + ch in with_arg:
                    takes_next = j == len(arg) - 1
                    break
            i += 2 if takes_next else 1
        else:
            return i
    return i


def option_given(arg: str, option: str) -> bool:
    """``arg`` is ``option``: itself (its value follows), ``--long=V``, or ``-oV`` (a short
    option of one letter glued to its value)."""
    if arg == option:
        return True
    if option.startswith("--"):
        return arg.startswith(option + "=")
    return len(option) == 2 and arg.startswith(option) and not arg.startswith("--")


def after_options(args: Sequence[str], with_arg: frozenset[str]) -> tuple[str, ...] | None:
    """The words from the first operand on (options ``with_arg`` take a value), or None."""
    k = operand_index(args, with_arg)
    return tuple(args[k:]) if k < len(args) else None


def option_values(args: Sequence[str], names: Sequence[str]) -> list[str]:
    """Every value of the options ``names`` (``-f F``, ``--file F``, ``--file=F``)."""
    found = [args[i + 1] for i, a in enumerate(args[:-1]) if a in names]
    return found + [a.partition("=")[2] for a in args if "=" in a and a.partition("=")[0] in names]


def option_value(args: Sequence[str], short: str, longs: Sequence[str], stop: int) -> str | None:
    """Value of ``-<short>`` (also inside a cluster like ``-lc``) or a long option."""
    for i, arg in enumerate(args[:stop]):
        for long in longs:
            if arg == long and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(long + "="):
                return arg[len(long) + 1 :]
        if short and arg.startswith("-") and not arg.startswith("--") and short in arg[1:]:
            rest = arg[arg.index(short, 1) + 1 :]
            return rest or (args[i + 1] if i + 1 < len(args) else None)
    return None


def fed_text(redirects: Sequence[RedirectLike], stdin: str | None) -> str | None:
    """Text a here-document or here-string on the command (else ``stdin``) feeds it."""
    for r in redirects:
        if r.op.startswith("<<"):
            return r.target
    return stdin


MAX_UPSTREAM = 256  # distinct names kept: a long pipeline stays linear


# What an upstream holds besides names when a stage never ends (yes, seq inf, cat /dev/zero).
ENDLESS = "\0endless"
_ENDLESS_FILES = frozenset({"/dev/zero", "/dev/urandom", "/dev/random"})


def _endless(name: str, argv: tuple[str, ...]) -> bool:
    if name == "seq":
        return any(a.lower() in ("inf", "infinity") for a in argv[1:])
    return name in ("cat", "head", "tail", "pv") and bool(_ENDLESS_FILES & set(argv[1:]))


def feed_upstream(upstream: tuple[str, ...], argv: tuple[str, ...]) -> tuple[str, ...]:
    """``upstream`` with the program of ``argv`` added (distinct names, bounded), and
    :data:`ENDLESS` when it never stops printing (``seq inf``, ``cat /dev/zero``)."""
    if not argv:
        return upstream
    name = program_name(argv[0])
    if ENDLESS not in upstream and _endless(name, argv) and len(upstream) < MAX_UPSTREAM:
        upstream = (*upstream, ENDLESS)
    if name in upstream or len(upstream) >= MAX_UPSTREAM:
        return upstream
    return (*upstream, name)


# ---- the words of one argv (the catalogue's checks read them) -----------------------
def program(argv: Sequence[str]) -> str:
    """Basename of the program, lower-cased."""
    return argv[0][argv[0].rfind("/") + 1 :].lower() if argv else ""


def _options_end(args: Sequence[str]) -> int:
    """Index of the first ``--`` (options end there), else ``len(args)``."""
    # A test before the index: most argvs have none, and a caught ValueError costs more.
    return args.index("--") if "--" in args else len(args)


def operands(args: Sequence[str]) -> list[str]:
    """Words that are not options (everything after ``--`` counts)."""
    end = _options_end(args)
    # Comprehensions over slices: one C-level pass each, for argvs of thousands of words.
    out = [a for a in args[:end] if a == "-" or not a.startswith("-")]
    return out + list(args[end + 1 :]) if end < len(args) else out


def positional(args: Sequence[str], valued: frozenset[str]) -> list[str]:
    """The operands among ``args``, the value after each of the ``valued`` options left out
    (``pip install -i URL x``: ``x``; ``aws s3 sync --profile p . s3://b``: ``.``, ``s3://b``)."""
    return [a for i, a in enumerate(args) if a[:1] != "-" and (i == 0 or args[i - 1] not in valued)]


def short_flags(args: Sequence[str]) -> str:
    """All letters of short option clusters (``-rf`` → ``rf``), up to ``--``."""
    head = args[: _options_end(args)]
    return "".join([a[1:] for a in head if a.startswith("-") and not a.startswith("--")])


def has_long(args: Sequence[str], *names: str) -> bool:
    """Some word is one of the long options ``names`` or an abbreviation of one, as GNU
    getopt_long reads it (``--rec`` is ``--recursive``, ``--forc`` is ``--force``), up to ``--``.
    Conservative: an abbreviation that would also fit another option counts too."""
    if "--" not in "".join(args):  # one C-level scan: most argvs have no long option
        return False
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--") and len(arg) > 2:
            word = arg[2:].partition("=")[0]
            if any(name.startswith(word) for name in names):
                return True
    return False


def first_operand(args: Sequence[str]) -> str:
    ops = operands(args)
    return ops[0].lower() if ops else ""


def leaves_cwd(folder: str) -> bool:
    """Whether a folder an option names may lie outside the working folder: absolute,
    from home, from a variable, or through ``..``."""
    return folder.startswith(("/", "~", "$")) or ".." in folder.split("/")


def git_elsewhere(args: Sequence[str]) -> str | None:
    """The global option that points git at a tree or repository outside the working
    folder (``-C /``, ``--work-tree=/etc``, ``--git-dir ~/.x``, ``-c core.worktree=/``),
    or None."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        name, eq, value = args[i].partition("=")
        if name in ("-C", "-c", "--git-dir", "--work-tree") and not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
            i += 1
        if name == "-c":
            key, _, value = value.partition("=")
            name = key if key.strip().lower() == "core.worktree" else ""
        if name in ("-C", "--git-dir", "--work-tree", "core.worktree") and leaves_cwd(value):
            return f"git {name} {value}"
        if name in ("--namespace", "--exec-path") and not eq:
            i += 1
        i += 1
    return None


def git_subcommand(args: Sequence[str]) -> tuple[str, list[str]]:
    """``git -C dir -c k=v push -f`` → ("push", ["-f"])."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"):
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return arg.lower(), list(args[i + 1 :])
    return "", []


# A destination that is a folder whatever the line does: a trailing "/", the home.
FOLDER = re.compile(r".*/$|~$|\$HOME$|\$\{HOME\}$|(?:.*/)?\.\.?$")  # also . and ..
# A URL's last path component: the name curl -O and wget give what they fetch.
URL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s]+/(?:[^?#\s]*/)?([^/?#\s]+)")


def landed_in(folder: str, sources: Sequence[str]) -> Iterator[str]:
    """Where each of ``sources`` lands when put in ``folder`` (its basename there)."""
    for source in sources:
        name = source.rstrip("/").rpartition("/")[2]
        if name and name not in (".", ".."):
            yield folder.rstrip("/") + "/" + name


def target_directory(args: Sequence[str]) -> str | None:
    """``-t DIR``, ``-tDIR``, ``--target-directory=DIR`` or any prefix of it down to
    ``--ta`` (GNU getopt_long): the folder cp, mv, ln and install put every file in."""
    for i, arg in enumerate(args):
        if arg == "--":
            return None
        name, eq, value = arg.partition("=")
        if len(name) > 3 and "--target-directory".startswith(name):
            return value if eq else (args[i + 1] if i + 1 < len(args) else None)
        if arg.startswith("-") and not arg.startswith("--"):  # -t DIR, -tDIR, -vt DIR, -sftDIR
            for j, letter in enumerate(arg[1:], 2):
                if letter == "t":
                    return arg[j:] or (args[i + 1] if i + 1 < len(args) else None)
                if letter in _VALUED_LETTERS:  # the rest of the word is that option's value
                    break
    return None


# Short options of cp, mv, ln and install that take a value (-S SUFFIX, -m MODE, -o, -g).
_VALUED_LETTERS = frozenset("Smog")


# Turns a loop may take before starting a job each is a flood of processes, as one that
# never ends is: past the thousands a user's process limit is reached.
FLOOD = 1000
# $(seq [OPTS] [FIRST [STEP]] LAST) or {FIRST..LAST[..STEP]}; every repetition bounded.
_SEQ_END = re.compile(
    r"\$\(\s{0,8}+seq\s{1,8}+(?:-[^\s)]{1,16}+\s{1,8}+){0,4}+(\d{1,12}+)(?:\s{1,8}+\d{1,12}+){0,2}+\s{0,8}+\)"
    r"|\{(\d{1,12}+)\.\.(\d{1,12}+)(?:\.\.\d{1,12}+)?\}"
)


def huge_count(words: str) -> bool:
    """Whether ``words`` count to :data:`FLOOD` or more: ``$(seq 100000)``, ``{1..5000}``."""
    for m in _SEQ_END.finditer(words):
        numbers = [int(n) for n in re.findall(r"\d+", m.group(0))]
        low, high = (numbers[0], numbers[-1]) if m.group(2) or len(numbers) > 1 else (1, numbers[0])
        if high - low + 1 >= FLOOD:
            return True
    return False
