"""What one profile's allow rules are at one moment, as the store keeps them (docs/allowlist.md).

A :class:`Snapshot` is immutable: the effective texts, their parsed rules, the
entries that do not parse (:class:`InvalidRule`, kept in the file and allowing
nothing) and the grants among them; its :class:`GrantedRules` index is built on
first use. :class:`ReconcileResult` is how a write or reload changed the rules.
Parsed rules are shared between homes (:func:`parsed_rule`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from multiplex.profiles.allowlist._granted_rules import GrantedRules
from multiplex.profiles.allowlist._grants import GrantText
from multiplex.shell import Rule, parse_rule

__all__ = ["InvalidRule", "ReconcileResult", "Snapshot", "parsed_rule"]


@dataclass(frozen=True, slots=True)
class InvalidRule:
    """An entry of the file that does not parse: it stays in the file and allows nothing."""

    text: str
    error: str
    line: int | None  # 1-based line in config.yaml, when the file still holds the entry

    def where(self, path: Path) -> str:
        return f"{path}:{self.line}" if self.line is not None else str(path)


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    """How the effective rules changed: texts that became allowed, and ones that stopped."""

    added: frozenset[str]
    removed: frozenset[str]


class Snapshot:
    """An immutable view of the effective rules; its RuleSet is built on first use."""

    __slots__ = ("_ruleset", "grants", "invalid", "live", "plain", "rules", "texts")

    def __init__(
        self,
        texts: tuple[str, ...],
        rules: tuple[Rule, ...],
        invalid: tuple[InvalidRule, ...],
        grants: tuple[tuple[Rule, GrantText], ...] = (),
    ) -> None:
        self.texts = texts
        self.rules = rules
        self.invalid = invalid
        self.grants = grants  # the entries with conditions (docs/allowlist.md#grants)
        self.plain = rules[: len(rules) - len(grants)]  # the rules without (sliced once)
        self.live: dict[object, GrantedRules] = {}  # the rules in effect, by what was dead
        self._ruleset: GrantedRules | None = None

    def ruleset(self) -> GrantedRules:
        ruleset = self._ruleset
        if ruleset is None:
            # Two readers may both build it; they build equal sets, and either may win.
            ruleset = self._ruleset = GrantedRules(self.rules)
        return ruleset

    @property
    def indexed(self) -> bool:
        return self._ruleset is not None


@functools.lru_cache(maxsize=8192)
def parsed_rule(text: str) -> Rule:
    # A Rule is immutable and depends on its text alone: homes that allow the same
    # rules (thousands at start) share one parse. A text that does not parse raises
    # each time (exceptions are not cached).
    return parse_rule(text)
