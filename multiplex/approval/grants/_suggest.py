"""What an "always" answer saves, and the narrower or wider rules it could save instead (docs/approvals.md#suggestions).

For a line of one simple command the candidates run from the exact command to
wider prefixes: ``npm run test:unit -- --watch`` offers ``npm run test:unit --
--watch`` (exact: what "always" saves), ``npm run test:unit *``, ``npm run
test:* *`` and ``npm run *`` (``npm run test:*`` would not allow the words after
the script); never the program alone (``npm *``). A prefix is
cut only after a word that is not an option. Each candidate says how many of the
profile's recorded decisions (``logs/decisions.jsonl``, the newest
:data:`HISTORY` of them) it would have matched, and which workspace files it
would be bound to (docs/allowlist.md#bindings). A line of several commands
offers only what "always" saves: one exact rule per command.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex._errors import RuleSyntaxError
from multiplex.approval.grants._bound_files import bindings_for, script_index
from multiplex.approval.records._history import read_decisions
from multiplex.shell import ParsedLine, Rule, exact_rule, parse_line, parse_rule

if TYPE_CHECKING:
    from multiplex.approval.waiting._why import Why

__all__ = ["HISTORY", "Suggestion", "candidates", "suggest", "with_suggestions"]

HISTORY = 2000  # recorded decisions a count looks at, newest first
_FAMILY = re.compile(r"^(\w[^:_-]*[:_-])[^:_-]+$")  # test:unit -> test:  (a family of names)


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One rule an "always" answer could save; ``saves`` marks the one it saves by default."""

    rule: str
    matched: int
    saves: bool = False
    bind: tuple[str, ...] = ()
    redacted: bool = False  # the rule shown is redacted: it cannot be chosen by its text

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "matched": self.matched,
            "saves": self.saves,
            "bind": list(self.bind),
            "redacted": self.redacted,
        }

    def line(self, number: int | None = None) -> str:
        """How a terminal shows it; ``number`` is what to type to save it "always"."""
        bound = f", bound to {', '.join(self.bind)}" if self.bind else ""
        lead = "always saves:" if self.saves else "or:          "
        key = f"[{number}] " if number is not None and not self.redacted else ""
        return f"  {lead} {key}{self.rule}    ({self.matched} recorded decisions matched{bound})"


def _rule(text: str) -> Rule | None:
    try:
        return parse_rule(text)
    except RuleSyntaxError:
        return None


def candidates(argv: Sequence[str]) -> list[str]:
    """Rule texts for ``argv`` from exact to wider, each once, all of which parse."""
    if not argv:
        return []
    try:
        out = [exact_rule(argv).text]
    except RuleSyntaxError:  # a word no rule can hold (a control character): none
        return []
    script = script_index(argv)  # python3 -W ignore build.py: never python3 -W ignore *
    for keep in range(len(argv), 1, -1):
        last = argv[keep - 1]
        if script is not None and keep <= script:
            break  # a wider rule would run any other script
        if last.startswith("-"):
            continue  # never cut right after an option: its value would be the wildcard
        if keep < len(argv):
            out.append(exact_rule(argv[:keep], prefix=True).text)
        family = _FAMILY.match(last) if "/" not in last else None  # a path is not a family
        if family is not None:
            stem = exact_rule([*argv[: keep - 1], family.group(1)]).text
            out.append(stem + "*" + (" *" if keep < len(argv) else ""))
    # Each candidate must allow the command itself (a word glob never reaches the next word).
    return [t for t in dict.fromkeys(out) if (r := _rule(t)) is not None and r.matches(argv)]


def _exact(argv: Sequence[str]) -> str | None:
    """The exact rule of ``argv``, or None when no rule can hold one of its words."""
    try:
        return exact_rule(argv).text
    except RuleSyntaxError:
        return None


@functools.lru_cache(maxsize=4096)
def _argvs(command: str) -> tuple[tuple[str, ...], ...]:
    parsed = parse_line(command)
    if parsed.error is not None:
        return ()
    return tuple(c.assignments + c.argv for c in parsed.commands)


def _history(home: Path, name: str) -> list[tuple[tuple[str, ...], ...]]:
    rows = read_decisions({name: home}, limit=HISTORY)
    return [_argvs(row["command"]) for row in rows if isinstance(row.get("command"), str)]


def suggest(
    command: str | ParsedLine,
    home: Path,
    cwd: Path | None,
    *,
    name: str = "",
    redact: Callable[[str], str] | None = None,
) -> list[Suggestion]:
    """The rules an "always" answer to ``command`` could save, exact first (see above)."""
    parsed = parse_line(command) if isinstance(command, str) else command
    if parsed.error is not None or not parsed.commands:
        return []
    simple = [c for c in parsed.commands if c.argv and not c.writes_file]
    if len(parsed.commands) == 1 and simple:
        texts = candidates(simple[0].assignments + simple[0].argv)
    else:
        texts = list(dict.fromkeys(filter(None, (_exact(c.assignments + c.argv) for c in simple))))
    history = _history(home, name)
    out: list[Suggestion] = []
    for index, text in enumerate(texts):
        rule = parse_rule(text)
        matched = sum(1 for line in history if line and any(rule.matches(a) for a in line))
        shown = redact(text) if redact is not None else text
        out.append(
            Suggestion(
                rule=shown,
                matched=matched,
                saves=index == 0 or len(parsed.commands) > 1,
                bind=tuple(bindings_for(text, parsed, cwd)),
                redacted=shown != text,
            )
        )
    return out


def with_suggestions(
    why: Why,
    parsed: ParsedLine,
    home: Path,
    cwd: Path | None,
    name: str,
    redact: Callable[[str], str],
) -> Why:
    """``why`` with the suggestions of ``parsed`` (what a prompt shows)."""
    try:
        found = suggest(parsed, home, cwd, name=name, redact=redact)
    except OSError:  # an unreadable history: the prompt still asks, without counts
        found = []
    return replace(why, suggestions=tuple(found))
