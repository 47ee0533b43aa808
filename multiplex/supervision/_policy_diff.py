"""Policy against history: a proposed config.yaml replayed against a profile's recorded decisions (docs/allowlist.md#policy-diff).

Each gate decision in the profile's ``decisions.jsonl`` (within ``since``) is
decided again, in its own context, by the gate under the config.yaml on disk
(``was``) and under the proposed file (``would_be``), both as the static
verdict ``approved``, ``blocked`` or ``ask`` with no session grant or yolo (a
session is not part of a config). Every command whose verdict would change is
listed once per (command, context, was, would_be) with how many records it
stands for. Commands are the records' own, already redacted; nothing is written
and nothing runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multiplex.approval._decision import Verdict
from multiplex.profiles import Profile
from multiplex.supervision._config import SupervisorConfig
from multiplex.supervision._supervisor import Supervisor

__all__ = ["PolicyChange", "policy_diff"]

# The records that are not a decision of the gate about a command line.
_NOT_DECISIONS = frozenset({"egress", "answer"})
_SESSION = "policy-diff"  # a session that holds no grant and no yolo


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """One command whose verdict the proposed config would change, and how often it was decided."""

    command: str
    context: str
    was: str
    would_be: str
    cause: str
    count: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "context": self.context,
            "was": self.was,
            "would_be": self.would_be,
            "cause": self.cause,
            "count": self.count,
        }


def _decided(rows: Iterable[Mapping[str, Any]]) -> Counter[tuple[str, str]]:
    seen: Counter[tuple[str, str]] = Counter()
    for row in rows:
        command, context = row.get("command"), row.get("context")
        if row.get("kind") in _NOT_DECISIONS or not isinstance(command, str) or not command:
            continue
        seen[(command, context if isinstance(context, str) and context else "api")] += 1
    return seen


def _why(verdict: Verdict) -> str:
    rule = f": {verdict.rule}" if verdict.rule else ""
    return f"{verdict.cause}{rule}"


def policy_diff(
    name: str,
    home: Path,
    proposed: Path,
    rows: Iterable[Mapping[str, Any]],
    config: SupervisorConfig | None = None,
) -> list[PolicyChange]:
    """Every recorded command of profile ``name`` whose verdict ``proposed`` would change.

    Raises :class:`~multiplex.ProfileConfigError` (naming the file and key) when
    the proposed file or the home's own config.yaml does not load.
    """
    base = (config or SupervisorConfig()).model_copy(update={"routes": (), "default_profile": name})
    sides = {
        "was": Supervisor({name: Profile(name, home)}, config=base, export_metrics=False),
        "would_be": Supervisor(
            {name: Profile(name, home, config_path=proposed)}, config=base, export_metrics=False
        ),
    }
    try:
        for sup in sides.values():
            sup.profile(name).state  # noqa: B018  # a config that does not load: its error, first
        changes = []
        for (command, context), count in sorted(_decided(rows).items()):
            was, would_be = (
                sup.test(name, command, context=context, session=_SESSION) for sup in sides.values()
            )
            if was.outcome != would_be.outcome:
                changes.append(
                    PolicyChange(
                        command,
                        context,
                        was.outcome.value,
                        would_be.outcome.value,
                        _why(would_be),
                        count,
                    )
                )
        return changes
    finally:
        for sup in sides.values():
            sup.close()
