"""Known values matched across line breaks (``docs/redaction.md``, "Layer 1").

A value folded every N characters (``base64`` wraps at 76, ``fold -w``), or cut
anywhere by newlines, is found by matching over the text with every ``\\r`` and
``\\n`` taken out (and out of every form too), then carrying the matches back to
where they are in the text. Taking the breaks out is one ``replace`` per kind
of break; carrying a match back is a search for it from where it must at least
be and a check of the breaks before it, so the whole stays linear.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["masked", "unbroken", "within_text"]

_T = TypeVar("_T", str, bytes)


def unbroken(text: _T) -> _T:
    """``text`` without line breaks (``\r`` and ``\n``); ``text`` itself if it has none."""
    if isinstance(text, bytes):
        return _unbroken(text, b"\n", b"\r")
    if "\n" not in text and "\r" not in text:
        return text
    if text.isascii():  # bytes.replace is about twice as fast as str.replace
        return _unbroken(text.encode("ascii"), b"\n", b"\r").decode("ascii")
    return _unbroken(text, "\n", "\r")


def _unbroken(text: _T, nl: _T, cr: _T) -> _T:
    if nl in text:
        text = text.replace(nl, text[:0])
    return text.replace(cr, text[:0]) if cr in text else text


def _seek(text: _T, i: int, j: int, target: int, nl: _T, cr: _T) -> int:
    """The index in ``text`` of character ``target`` of its unbroken form, from the
    index ``i`` in ``text`` of character ``j`` (``j <= target``)."""
    while j < target:
        step = target - j
        j += step - text.count(nl, i, i + step) - text.count(cr, i, i + step)
        i += step
        while text[i : i + 1] in (nl, cr):
            i += 1
    return i


def _carried(
    text: _T, flat: _T, spans: list[tuple[int, int]], nl: _T, cr: _T
) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    has_cr = cr in text
    i = j = 0  # the end of the last span carried back, in text and in flat
    for start, end in spans:
        # Unbroken, the gap before the span is start - j characters long: the
        # span is at least that far on. Found there whole, with a gap that
        # unbroken is that long, it is there (it holds no break). Looked for
        # only as far as a gap with up to twice as many breaks as characters:
        # a span cut by breaks must not cost a search to the end each.
        least, piece = i + start - j, flat[start:end]
        # (A near window first: a search's cost grows with its window, found or not.)
        at = text.find(piece, least, least + (start - j) // 8 + 2 * (end - start) + 64)
        if at < 0:
            at = text.find(piece, least, least + 2 * (start - j) + 2 * (end - start) + 64)
        if at >= 0:
            gap = text[i:at].replace(nl, text[:0])
            if has_cr:
                gap = gap.replace(cr, text[:0])
            if len(gap) == start - j:
                out.append((at, at + end - start))
                i, j = at + end - start, end
                continue
        # Cut by breaks: count them to its first and its last character.
        while text[i : i + 1] in (nl, cr):
            i += 1
        first = _seek(text, i, j, start, nl, cr)
        i = _seek(text, first, start, end - 1, nl, cr) + 1
        j = end
        out.append((first, i))
    return out


def within_text(text: _T, flat: _T, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` of ``flat``, ``unbroken(text)`` (in order, apart, not empty), as spans of ``text``.

    A span starts at its first character and ends after its last one: line
    breaks inside it are in it, those around it are not.
    """
    if not spans or flat is text:
        return spans
    if isinstance(text, bytes):
        return _carried(text, flat, spans, b"\n", b"\r")
    if text.isascii():
        return _carried(text.encode("ascii"), flat.encode("ascii"), spans, b"\n", b"\r")
    return _carried(text, flat, spans, "\n", "\r")


def masked(text: _T, spans: list[tuple[int, int]], mask: _T) -> _T:
    """``text`` with each of ``spans`` (in order, apart) replaced by ``mask``."""
    if not spans:
        return text
    pieces: list[_T] = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(mask)
        last = end
    pieces.append(text[last:])
    return text[:0].join(pieces)
