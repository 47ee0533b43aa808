"""Why and where an approval request asks: what every prompt shows (docs/approvals.md#what-a-prompt-shows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from multiplex.approval._decision import Danger, TraceStep
from multiplex.scopes import ProfileScope
from multiplex.shell import DANGEROUS, HARDLINE, Finding

if TYPE_CHECKING:
    from multiplex.approval._suggest import Suggestion

__all__ = ["Why", "why_asked"]


@dataclass(frozen=True, slots=True)
class Why:
    """Why and where a request asks (docs/approvals.md#what-a-prompt-shows).

    ``step`` is the check that asked (``detection``, or ``smart`` when the smart
    approver escalated) and ``reason`` its detail line; ``patterns`` are the
    named patterns found, each once, as ``(name, sentence)``; ``dangers`` every
    pattern with the part of the line it came from, in line order (already
    redacted); ``cwd`` and ``backend`` are where the command would run;
    ``suggestions`` what an "always" answer saves and the rules it could save
    instead (docs/approvals.md#suggestions).
    """

    cwd: str = ""
    backend: str = ""
    step: str = "ask"
    reason: str = ""
    patterns: tuple[tuple[str, str], ...] = ()
    dangers: tuple[Danger, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "cwd": self.cwd,
            "backend": self.backend,
            "step": self.step,
            "reason": self.reason,
            "patterns": [{"name": n, "description": d} for n, d in self.patterns],
            "dangers": [d.as_dict() for d in self.dangers],
            "suggestions": [s.as_dict() for s in self.suggestions],
        }

    def lines(self) -> list[str]:
        """The human-readable form a terminal prompt prints."""
        out = [f"  where:  {self.cwd} ({self.backend} backend)"]
        out.append(
            f"  why:    {self.step}: {self.reason}" if self.reason else f"  why:    {self.step}"
        )
        if self.dangers:
            out.extend(f"  - {d.pattern}: {d.segment}" for d in self.dangers)
        else:
            out.extend(f"  - {name}: {sentence}" for name, sentence in self.patterns)
        numbered = len(self.suggestions) > 1  # a terminal answers N to save rule N
        out.extend(s.line(n if numbered else None) for n, s in enumerate(self.suggestions, 1))
        return out


_SENTENCES = {p.name: p.description for p in (*HARDLINE, *DANGEROUS)}


def why_asked(
    scope: ProfileScope,
    backend: str,
    trace: list[TraceStep],
    finding: Finding | None,
    dangers: tuple[Danger, ...] = (),
) -> Why:
    """The step that asked (the first trace step that said ask or escalate), its patterns, cwd, backend."""
    asked = next((t for t in trace if t.result in ("ask", "escalate")), None)
    named: dict[str, str] = {}
    if finding is not None:  # the pattern that decided comes first
        named[finding.pattern.name] = finding.pattern.description
    for danger in dangers:
        named.setdefault(danger.pattern, _SENTENCES.get(danger.pattern, ""))
    patterns = tuple(named.items())
    return Why(
        cwd=str(scope.cwd) if scope.cwd is not None else f"(the {backend} backend's default)",
        backend=backend,
        step=asked.step if asked is not None else "ask",
        reason=asked.detail if asked is not None else "a human must approve",
        patterns=patterns,
        dangers=dangers,
    )
