"""What a profile's output goes through before anyone sees it (``docs/redaction.md``).

Layer 1 (known values) always applies: the profile's own, and every other
profile's, whatever the profile's switch says. Layer 2 (shapes) applies when the
profile's ``security.redact_secrets`` switch is on. Audit logs, approval
requests and the dashboard use :func:`redact_always`, which ignores the switch.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar

from multiplex.redaction import _engine
from multiplex.redaction._known import KNOWN_MASK, KnownValues
from multiplex.redaction._lines import masked, unbroken, within_text
from multiplex.redaction._literal_set import LiteralSet
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
    # Matched over the text unmasked, ``then`` finds what it would after
    # ``first``'s masks unless one of its matches meets one of them, or one
    # of its forms would reach into a mask: only then is it run again.
    if spans and (_overlapping(spans, more) or _reaches_a_mask(then, flat, spans, mask)):
        more = _unmasked(then.flat_spans(masked(flat, spans, mask)), spans)
    return within_text(data, flat, _union(spans, more) if spans and more else spans or more)


def _reaches_a_mask(known: KnownValues, flat: _T, spans: list[Span], mask: _T) -> bool:
    """Whether, with ``spans`` of ``flat`` masked, a form of ``known`` would occur
    reaching into a mask.

    Only the forms that could (``_meeting_forms``) are looked for, and only in
    the masks and what lies within such a form's length of them: every
    occurrence, not only those a left-to-right pass picks. Without the engine,
    or over text that is not ASCII, the answer is whether any form could.
    """
    if not _meeting_forms(known):
        return False
    literals = _meeting_set(known)
    if literals is None or not isinstance(flat, bytes) or not isinstance(mask, bytes):
        return True
    reach = literals.longest - 1
    if len(spans) * (2 * reach + len(mask)) > len(flat):
        return True  # the windows would cost about a scan of the whole
    windows, masks = _windows(flat, spans, mask, reach)
    found = literals.occurrences(windows)
    if found is None:
        return True
    found.sort()
    j = 0
    for start, end in found:
        while j < len(masks) and masks[j][1] <= start:
            j += 1
        if j < len(masks) and masks[j][0] < end:
            return True
    return False


def _windows(flat: bytes, spans: list[Span], mask: bytes, reach: int) -> tuple[bytes, list[Span]]:
    """``flat`` with ``spans`` (in order, apart, at least one) masked, cut to the
    masks and ``reach`` bytes either side; the windows that do not meet are set
    apart by a newline, which neither a flat text nor a form holds. Also where
    the masks are in it."""
    parts: list[bytes] = []
    masks: list[Span] = []
    length, last = 0, -1  # the length so far; where the last span ends in flat
    for start, end in spans:
        if last < 0:
            lead = flat[max(0, start - reach) : start]
        elif start - last < 2 * reach:  # this span's window meets the last one's
            lead = flat[last:start]
        else:
            lead = flat[last : last + reach] + b"\n" + flat[start - reach : start]
        parts += (lead, mask)
        length += len(lead)
        masks.append((length, length + len(mask)))
        length += len(mask)
        last = end
    parts.append(flat[last : last + reach])
    return b"".join(parts), masks


@lru_cache(maxsize=64)
def _meeting_forms(known: KnownValues) -> frozenset[str]:
    """The forms of ``known`` that could match across or inside a ``KNOWN_MASK``:
    those that end with its start, start with its end, hold it or lie inside it."""
    ends = tuple(KNOWN_MASK[:k] for k in range(1, len(KNOWN_MASK)))
    starts = tuple(KNOWN_MASK[-k:] for k in range(1, len(KNOWN_MASK)))
    return frozenset(
        f
        for f in known.all_forms()
        if f in KNOWN_MASK or KNOWN_MASK in f or f.endswith(ends) or f.startswith(starts)
    )


@lru_cache(maxsize=64)
def _meeting_set(known: KnownValues) -> LiteralSet | None:
    """``_meeting_forms(known)`` in an engine matcher; None without the engine."""
    hs = _engine.backend()
    if hs is None:
        return None
    try:
        return LiteralSet(hs, _meeting_forms(known))
    except hs.error:
        return None


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
