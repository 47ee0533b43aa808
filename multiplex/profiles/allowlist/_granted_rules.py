"""The allow rules in effect at one moment, grants' conditions applied (docs/allowlist.md#grants).

:class:`GrantedRules` is a :class:`~multiplex.shell.RuleSet` of every rule that
holds now: plain rules, and grants neither expired nor spent. A grant bound to
files is matched only when no other rule matches, and only while its files hold
what they held when it was granted; :meth:`GrantedRules.held` says why a command
such a grant would have allowed must ask instead. :meth:`GrantedRules.spend`
consumes the uses of the grants that approve a line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from multiplex.profiles.allowlist._bindings import binding_problem
from multiplex.profiles.allowlist._grants import GrantText
from multiplex.shell import Rule, RuleSet

__all__ = ["GrantedRules", "grant_state", "live_rules"]


class GrantedRules(RuleSet):
    """The rules in effect now; ``match`` checks bound grants' files (one ``lstat`` each when unchanged)."""

    __slots__ = ("_base", "_bound", "_limited", "_spend")

    def __init__(
        self,
        rules: Iterable[Rule],
        *,
        bound: Sequence[tuple[Rule, GrantText]] = (),
        limited: Mapping[str, GrantText] | None = None,
        base: Path = Path(),
        spend: Callable[[GrantText], bool] = lambda grant: True,
    ) -> None:
        super().__init__(rules)
        self._bound = tuple(bound)
        self._limited = dict(limited or {})
        self._base = base
        self._spend = spend

    def match(self, argv: Sequence[str]) -> Rule | None:
        """The first rule in effect that matches ``argv``; a bound grant only if its files hold."""
        rule = super().match(argv)
        if rule is not None or not self._bound:
            return rule
        for rule, grant in self._bound:
            if rule.matches(argv) and binding_problem(grant.bind, self._base) is None:
                return rule
        return None

    def bound(self, rule: Rule) -> bool:
        """Whether ``rule`` (as :meth:`match` returned it) is a grant bound to files."""
        return any(r is rule for r, _ in self._bound)

    @property
    def binds(self) -> bool:
        """Some grant in effect is bound to files (only then can :meth:`held` find anything)."""
        return bool(self._bound)

    def held(self, argv: Sequence[str]) -> str | None:
        """Why ``argv`` asks although a bound grant names it (``build.py changed since it was
        allowed``), or None when it is allowed or no bound grant names it."""
        if not self._bound or super().match(argv) is not None:
            return None
        problem: str | None = None
        for rule, grant in self._bound:
            if rule.matches(argv):
                why = binding_problem(grant.bind, self._base)
                if why is None:
                    return None
                problem = problem or why
        return problem

    def spend(self, argvs: Iterable[Sequence[str]]) -> bool:
        """Consume one use of each limited grant that approves one of ``argvs``.

        False when one was spent meanwhile (by another process): the line is not
        approved by it. Each use is taken under the file's lock (docs/allowlist.md#uses).
        """
        if not self._limited:
            return True
        spent: set[str] = set()
        for argv in argvs:
            rule = self.match(argv)
            grant = self._limited.get(rule.text) if rule is not None else None
            if grant is None or rule is None or rule.text in spent:
                continue
            if not self._spend(grant):
                return False
            spent.add(rule.text)
        return True


def live_rules(
    plain: Sequence[Rule],
    grants: Sequence[tuple[Rule, GrantText]],
    cache: dict[object, GrantedRules],
    now: float,
    base: Path,
    spent: bool,
    spend: Callable[[GrantText], bool],
) -> GrantedRules:
    """The rules in effect at ``now``: ``plain`` and the grants neither expired nor
    (unless ``spent``) used up; built once per set of grants in effect (``cache``)."""
    alive = tuple(
        index
        for index, (_, grant) in enumerate(grants)
        if (grant.expires is None or grant.expires.timestamp() > now)
        and (spent or grant.uses is None or grant.uses > 0)
    )
    key = (alive, base)
    found = cache.get(key)
    if found is not None:
        return found
    if len(cache) > 64:
        cache.clear()
    unbound = [grants[i][0] for i in alive if not grants[i][1].bind]
    plain_texts = {rule.text for rule in plain}
    limited = {
        rule.text: grant
        for rule, grant in (grants[i] for i in alive)
        if grant.uses is not None and rule.text not in plain_texts
    }
    made = cache[key] = GrantedRules(
        [*plain, *unbound],
        bound=[grants[i] for i in alive if grants[i][1].bind],
        limited=limited,
        base=base,
        spend=spend,
    )
    return made


def grant_state(grant: GrantText, now: float, base: Path) -> dict[str, Any]:
    """What ``allowlist list`` shows of a grant: its conditions and whether it holds now."""
    expired = grant.expires is not None and grant.expires.timestamp() <= now
    spent = grant.uses == 0
    files = []
    problem: str | None = None
    for name, digest in grant.bind:
        why = binding_problem(((name, digest),), base)
        problem = problem or why
        state = "unchanged" if why is None else ("missing" if "missing" in why else "changed")
        files.append({"file": name, "sha256": digest.removeprefix("sha256:"), "state": state})
    state = "expired" if expired else "spent" if spent else "held" if problem else "active"
    return {
        "rule": grant.rule,
        "expires": grant.data_expires(),
        "uses_left": grant.uses,
        "bind": files,
        "state": state,
        "cause": problem if state == "held" else None,
    }
