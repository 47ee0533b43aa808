"""Reading argv words: where options end, an option's value, text fed to stdin (docs/approvals.md#parsing).

Shared by the unwrapping of wrappers (``shell._unwrap``) and of programs that
carry code (``shell._payloads``). A pure leaf: stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "ASSIGN",
    "MAX_UPSTREAM",
    "NextStep",
    "RedirectLike",
    "fed_text",
    "feed_upstream",
    "operand_index",
    "option_value",
    "opts",
    "program_name",
]

ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


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


def feed_upstream(upstream: tuple[str, ...], argv: tuple[str, ...]) -> tuple[str, ...]:
    """``upstream`` with the program of ``argv`` added (distinct names, bounded)."""
    if not argv:
        return upstream
    name = program_name(argv[0])
    if name in upstream or len(upstream) >= MAX_UPSTREAM:
        return upstream
    return (*upstream, name)
