"""What a profile's output goes through before anyone sees it (``docs/redaction.md``).

Layer 1 (known values) always applies: the profile's own, and every other
profile's, whatever the profile's switch says. Layer 2 (shapes) applies when the
profile's ``security.redact_secrets`` switch is on. Audit logs, approval
requests and the dashboard use :func:`redact_always`, which ignores the switch.
"""

from __future__ import annotations

from tests.redaction._reference._known import KnownValues
from tests.redaction._reference._prefilter import redact_patterns

__all__ = ["Redactor", "redact_always"]


class Redactor:
    """What one profile's output goes through.

    ``own`` are this profile's known secret values, ``others`` every other
    profile's (a shared object is fine: it is immutable and compiles once).
    Own and others' values are masked always; layer-2 shapes only when
    ``layer2`` (the profile's redaction switch) is true.
    """

    __slots__ = ("_layer2", "_others", "_own")

    def __init__(
        self, own: KnownValues, *, layer2: bool = True, others: KnownValues | None = None
    ) -> None:
        self._own = own
        # Kept apart rather than unioned: the others set is typically shared by
        # every profile of a supervisor, and a union would recompile it per profile.
        self._others = others if others else None
        self._layer2 = bool(layer2)

    @property
    def layer2(self) -> bool:
        """Whether layer-2 shapes are masked in this profile's output."""
        return self._layer2

    def redact(self, text: str) -> str:
        """``text`` with known values (own and others') and, if ``layer2``, secret shapes masked."""
        text = self._own.redact(text)
        if self._others is not None:
            text = self._others.redact(text)
        if self._layer2:
            text = redact_patterns(text)
        return text

    def __repr__(self) -> str:
        others = len(self._others) if self._others is not None else 0
        return f"Redactor(own={len(self._own)}, others={others}, layer2={self._layer2})"


def redact_always(text: str, known: KnownValues) -> str:
    """Known values and every layer-2 shape masked, whatever any switch says.

    For the audit log, approval requests and the dashboard (``docs/redaction.md``).
    """
    return redact_patterns(known.redact(text))
