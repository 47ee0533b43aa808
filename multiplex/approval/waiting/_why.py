"""Why and where an approval request asks: what every prompt shows (docs/approvals.md#what-a-prompt-shows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from multiplex.approval._decision import Danger, TraceStep
from multiplex.scopes import ProfileScope
from multiplex.shell import DANGEROUS, HARDLINE, Finding

if TYPE_CHECKING:
    from multiplex.approval.grants._suggest import Suggestion

__all__ = ["Why", "because", "network_words", "why_asked"]


@dataclass(frozen=True, slots=True)
class Why:
    """Why and where a request asks (docs/approvals.md#what-a-prompt-shows).

    ``step`` is the check that asked (``detection``, or ``smart`` when the smart
    approver escalated) and ``reason`` its detail line; ``patterns`` are the
    named patterns found, each once, as ``(name, sentence)``; ``dangers`` every
    pattern with the part of the line it came from, in line order (already
    redacted); ``cwd`` and ``backend`` are where the command would run,
    ``sandbox`` what it would run in (``bwrap``, ``none``, ``container``,
    ``remote host``), ``network`` its ``terminal.network`` (``on``, ``off``,
    ``host``) and ``egress_allow`` that profile's ``terminal.egress.allow``;
    ``because`` is why it asks in an operator's words; ``suggestions`` what an
    "always" answer saves and the rules it could save instead
    (docs/approvals.md#suggestions).
    """

    cwd: str = ""
    backend: str = ""
    step: str = "ask"
    reason: str = ""
    patterns: tuple[tuple[str, str], ...] = ()
    dangers: tuple[Danger, ...] = ()
    suggestions: tuple[Suggestion, ...] = ()
    because: str = ""
    sandbox: str = ""
    network: str = ""
    egress_allow: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "cwd": self.cwd,
            "backend": self.backend,
            "step": self.step,
            "reason": self.reason,
            "patterns": [{"name": n, "description": d} for n, d in self.patterns],
            "dangers": [d.as_dict() for d in self.dangers],
            "suggestions": [s.as_dict() for s in self.suggestions],
            "because": self.because,
            "sandbox": self.sandbox,
            "network": self.network,
            "egress_allow": list(self.egress_allow),
        }

    def network_words(self) -> str:
        """``terminal.network`` and the egress allow list, as an operator reads them."""
        return network_words(self.network, self.egress_allow)

    def lines(self) -> list[str]:
        """The human-readable form a terminal prompt prints: where, what in, why (once)."""
        out = [f"  Where:        {self.cwd} ({self.backend} backend)"]
        if self.sandbox or self.network:
            out.append(
                f"  Runs in:      sandbox {self.sandbox or 'unknown'}; network: {self.network_words()}"
            )
        why = self.because or self.reason or "a human must approve"
        out.append(f"  Why you are asked: {visible(why)}")
        if len(self.dangers) > 1:  # each danger with the part of the line it is in
            out.extend(f"    - {d.pattern}: {visible(d.segment)}" for d in self.dangers)
        numbered = len(self.suggestions) > 1  # a terminal answers N to save rule N
        out.extend(s.line(n if numbered else None) for n, s in enumerate(self.suggestions, 1))
        return out


# Control characters shown as escapes (but tab): an ESC sequence in a command could move a
# terminal's cursor and rewrite the lines a person reads before answering; a newline in
# a one-line field would start a line that reads as the prompt's own.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F) if c != 0x09}
_CONTROL.update({c: f"\\u{c:04x}" for c in (*range(0x80, 0xA0), 0x2028, 0x2029)})


def visible(text: str) -> str:
    """``text`` on one line, every control character shown as its escape."""
    return text.translate(_CONTROL)


def network_words(network: str, egress_allow: Sequence[str]) -> str:
    """A profile's ``terminal.network`` and ``terminal.egress.allow`` in an operator's words."""
    if network == "off":
        return "no network (loopback only)"
    if network == "host":
        return "the host's network, no egress proxy"
    if network != "on":
        return network or "unknown"
    if not egress_allow:
        return "out through the egress proxy, any public host"
    shown = ", ".join(egress_allow[:3])
    more = f" and {len(egress_allow) - 3} more" if len(egress_allow) > 3 else ""
    return f"out through the egress proxy to {shown}{more} only"


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
    step = asked.step if asked is not None else "ask"
    reason = asked.detail if asked is not None else "a human must approve"
    return Why(
        cwd=str(scope.cwd) if scope.cwd is not None else f"(the {backend} backend's default)",
        backend=backend,
        step=step,
        reason=reason,
        patterns=patterns,
        dangers=dangers,
        because=because(step, reason, patterns),
    )


def because(step: str, reason: str, patterns: tuple[tuple[str, str], ...]) -> str:
    """Why a request asks, in an operator's words (docs/approvals.md#what-a-prompt-shows)."""
    if patterns:
        name, sentence = patterns[0]
        return f"{name}: {sentence}" if sentence else name
    if step == "detection" and reason.startswith("mode strict"):
        return "strict mode: the command is not on the allowlist"
    if step == "allowlist":
        return f"an allowlist rule would allow it, but {reason}"
    if step == "smart":
        return f"the smart approver handed it to a human ({reason})"
    if step == "ask" and reason.startswith("context "):
        return "nothing allowed it on its own: a human must approve"
    return reason or "a human must approve"
