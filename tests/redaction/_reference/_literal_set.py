"""Layer 1's fast matcher: many literal strings found in one Hyperscan pass.

The matches are the ones the trie regex of :mod:`._known` gives: scanning left
to right, the leftmost occurrence of any literal, the longest literal there,
then on from its end. Hyperscan reports every occurrence (by its end offset);
this module picks those matches out of the reports.
"""

from __future__ import annotations

from collections.abc import Collection
from types import ModuleType

from tests.redaction._reference._engine import Database, escape

__all__ = ["LiteralSet"]

# Longer literals are found by their first bytes and confirmed with startswith:
# a credential file's base64 runs to 87 KB, far beyond what an expression should
# hold, and a literal may contain NUL bytes.
_PREFIX = 256


class _Hits(list[tuple[int, int]]):
    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


def _collect(expression: int, _start: int, end: int, _flags: int, hits: _Hits) -> bool:
    hits.append((expression, end))
    return len(hits) > hits.limit  # stop: so many reports would cost more than the regex


class LiteralSet:
    """The non-overlapping, leftmost-longest occurrences of a fixed set of literals."""

    __slots__ = ("_db", "_forms", "_lengths", "_long")

    def __init__(self, hs: ModuleType, literals: Collection[str]) -> None:
        self._forms = [f.encode("utf-8", "surrogatepass") for f in literals]
        self._lengths = [min(len(f), _PREFIX) for f in self._forms]
        self._long = any(len(f) > _PREFIX for f in self._forms)
        expressions = [escape(f[:_PREFIX]) for f in self._forms]
        self._db = Database(hs, expressions, [0] * len(expressions))

    def spans(self, data: bytes) -> list[tuple[int, int]] | None:
        """Byte spans of the matches in ``data``, in order; None if there were too many to list.

        ``data`` is text encoded as UTF-8 with ``surrogatepass``, like the literals,
        so every span starts and ends on a character boundary.
        """
        hits = _Hits(1024 + len(data) // 8)
        if not self._db.scan(data, _collect, hits):
            return None
        if not hits:
            return []
        forms, lengths = self._forms, self._lengths
        found: list[tuple[int, int]] = []
        for i, end in hits:
            start = end - lengths[i]
            form = forms[i]
            if self._long and len(form) > _PREFIX and not data.startswith(form, start):
                continue
            found.append((start, -len(form)))  # leftmost first, then longest
        found.sort()
        spans: list[tuple[int, int]] = []
        pos = 0
        for start, negative_length in found:
            if start >= pos:
                pos = start - negative_length
                spans.append((start, pos))
        return spans

    def replace(self, text: str, mask: str) -> str | None:
        """``text`` with every match replaced by ``mask``; None if there were too many to list."""
        ascii_only = text.isascii()
        data = text.encode("ascii") if ascii_only else text.encode("utf-8", "surrogatepass")
        spans = self.spans(data)
        if spans is None:
            return None
        if not spans:
            return text
        if ascii_only:  # byte offsets are character offsets
            pieces: list[str] = []
            last = 0
            for start, end in spans:
                pieces.append(text[last:start])
                pieces.append(mask)
                last = end
            pieces.append(text[last:])
            return "".join(pieces)
        encoded_mask = mask.encode("utf-8")
        chunks: list[bytes] = []
        last = 0
        for start, end in spans:
            chunks.append(data[last:start])
            chunks.append(encoded_mask)
            last = end
        chunks.append(data[last:])
        return b"".join(chunks).decode("utf-8", "surrogatepass")
