"""What a profile's output goes through before anyone sees it (``docs/redaction.md``).

Layer 1 (known values) always applies: the profile's own, and every other
profile's, whatever the profile's switch says. Layer 2 (shapes) applies when the
profile's ``security.redact_secrets`` switch is on. Audit logs, approval
requests and the dashboard use :func:`redact_always`, which ignores the switch.
"""

from __future__ import annotations

from multiplex.redaction import _prefilter
from multiplex.redaction._known import KnownValues
from multiplex.redaction._prefilter import line_pieces, may_span_lines, redact_patterns

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
        if _in_pieces(text, self._own, self._others, self._layer2):
            return "".join([self._redact(piece) for piece in line_pieces(text)])
        return self._redact(text)

    def _redact(self, text: str) -> str:
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
    if _in_pieces(text, known, None, True):
        return "".join([redact_patterns(known.redact(piece)) for piece in line_pieces(text)])
    return redact_patterns(known.redact(text))


def _in_pieces(text: str, own: KnownValues, others: KnownValues | None, layer2: bool) -> bool:
    """Whether ``text`` is long enough to redact piece by piece, and may be.

    Pieces end at newlines and stay in the CPU's cache; their results joined are
    the whole text's when no match can span a line: no known form holds a
    newline, no PEM block starts in the text (layer 1 cannot make one: a mask
    holds no "-"), and the text is ASCII (layer 2 lower-cases pieces as it
    would the whole).
    """
    return (
        len(text) >= 2 * _prefilter.PIECE
        and text.isascii()
        and own._within_lines()
        and (others is None or others._within_lines())
        and not (layer2 and may_span_lines(text))
    )
