"""What a profile's output goes through before anyone sees it (``docs/redaction.md``).

Layer 1 (known values) always applies: the profile's own, and every other
profile's, whatever the profile's switch says. Layer 2 (shapes) applies when the
profile's ``security.redact_secrets`` switch is on. Audit logs, approval
requests and the dashboard use :func:`redact_always`, which ignores the switch.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar

from multiplex.redaction._known import KNOWN_MASK, KnownValues
from multiplex.redaction._lines import masked, unbroken, within_text
from multiplex.redaction._prefilter import redact_patterns

__all__ = ["Redactor", "redact_always"]

Span = tuple[int, int]
_T = TypeVar("_T", str, bytes)
_MASK_BYTES = KNOWN_MASK.encode("ascii")


def _redact_known(text: str, first: KnownValues, then: KnownValues | None) -> str:
    """``first.redact(text)``, then ``then.redact`` of that, in one unbroken pass.

    The text is taken out of its line breaks and carried back once for both
    sets; ``then`` is matched over the text as ``first`` left it masked, as if
    it ran after it. (A match of ``then`` across one of ``first``'s masks,
    which only a value holding mask characters could make, covers that
    mask's span whole.)
    """
    if text.isascii():  # matched as bytes: no second encoding, line breaks out faster
        spans = _spans(text.encode("ascii"), _MASK_BYTES, first, then)
    else:
        spans = _spans(text, KNOWN_MASK, first, then)
    return masked(text, spans, KNOWN_MASK)


def _spans(data: _T, mask: _T, first: KnownValues, then: KnownValues | None) -> list[Span]:
    flat = unbroken(data)
    spans = first.flat_spans(flat)
    if then is None:
        return within_text(data, flat, spans)
    more = then.flat_spans(flat)
    if spans and more:
        # Matched over the text unmasked, ``then`` finds what it would after
        # ``first``'s masks unless one of its matches meets one of them (or a
        # form of it could match mask characters): only then is it run again.
        if _meets_mask(then) or _overlapping(spans, more):
            more = _unmasked(then.flat_spans(masked(flat, spans, mask)), spans)
        spans = _union(spans, more)
    return within_text(data, flat, spans or more)


@lru_cache(maxsize=64)
def _meets_mask(known: KnownValues) -> bool:
    """Whether a form of ``known`` could match across or inside a ``KNOWN_MASK``."""
    ends = [KNOWN_MASK[:k] for k in range(1, len(KNOWN_MASK))]
    starts = [KNOWN_MASK[-k:] for k in range(1, len(KNOWN_MASK))]
    return any(
        f in KNOWN_MASK or KNOWN_MASK in f or f.endswith(tuple(ends)) or f.startswith(tuple(starts))
        for f in known._all_forms()
    )


def _overlapping(a: list[Span], b: list[Span]) -> bool:
    """Whether a span of ``a`` and one of ``b`` (each in order, apart) overlap."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] <= b[j][0]:
            i += 1
        elif b[j][1] <= a[i][0]:
            j += 1
        else:
            return True
    return False


def _unmasked(spans: list[Span], masks: list[Span]) -> list[Span]:
    """``spans`` of a text whose ``masks`` were replaced by ``KNOWN_MASK``, as
    spans of the text before; one that reaches into a mask covers it whole."""
    size = len(KNOWN_MASK)
    out: list[Span] = []
    j, shift, at = 0, 0, 0  # the next mask, the length masks before it took out, where it is now
    for start, end in spans:
        while j < len(masks) and (at := masks[j][0] - shift) + size <= start:
            shift += masks[j][1] - masks[j][0] - size
            j += 1
        first = masks[j][0] if j < len(masks) and at <= start else start + shift
        k, end_shift = j, shift
        while k < len(masks) and (mask_at := masks[k][0] - end_shift) < end:
            if mask_at + size > end:  # ends inside this mask
                break
            end_shift += masks[k][1] - masks[k][0] - size
            k += 1
        inside = k < len(masks) and masks[k][0] - end_shift < end
        out.append((first, masks[k][1] if inside else end + end_shift))
    return out


def _union(a: list[Span], b: list[Span]) -> list[Span]:
    """The spans of both, in order; overlapping ones become one."""
    out: list[Span] = []
    for start, end in sorted(a + b):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


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
        """``text`` with known values (own and others') and, if ``layer2``, secret shapes masked.

        Layer 1 runs over the whole text, since a known value may be cut across
        lines; layer 2 cuts long text into pieces of its own.
        """
        text = _redact_known(text, self._own, self._others)
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
