"""Layer 1's fast matcher: many literal strings found in one Hyperscan pass.

The matches are the ones the trie regex of :mod:`._known` gives: scanning left
to right, the leftmost occurrence of any literal, the longest literal there,
then on from its end. Hyperscan reports every occurrence (by its end offset);
this module picks those matches out of the reports.
"""

from __future__ import annotations

from collections.abc import Collection
from types import ModuleType

from multiplex._literals import Database, escape

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

    __slots__ = ("_db", "_forms", "_lengths", "_long", "longest")

    def __init__(self, hs: ModuleType, literals: Collection[str]) -> None:
        self._forms = [f.encode("utf-8", "surrogatepass") for f in literals]
        self._lengths = [min(len(f), _PREFIX) for f in self._forms]
        self.longest = max(map(len, self._forms), default=0)  # in bytes
        self._long = self.longest > _PREFIX
        expressions = [escape(f[:_PREFIX]) for f in self._forms]
        self._db = Database(hs, expressions, [0] * len(expressions))

    def occurrences(self, data: bytes) -> list[tuple[int, int]] | None:
        """Byte spans of every occurrence of a literal in ``data``, overlapping ones
        too, in the order the scan reports them; None if there were too many to list."""
        hits = _Hits(1024 + len(data) // 8)
        if not self._db.scan(data, _collect, hits):
            return None
        forms, lengths, long = self._forms, self._lengths, self._long
        found: list[tuple[int, int]] = []
        for i, end in hits:
            start = end - lengths[i]
            form = forms[i]
            if long and len(form) > _PREFIX and not data.startswith(form, start):
                continue
            found.append((start, start + len(form)))
        return found

    def spans(self, data: bytes) -> list[tuple[int, int]] | None:
        """Byte spans of the matches in ``data``, in order; None if there were too many to list.

        ``data`` is text encoded as UTF-8 with ``surrogatepass``, like the literals,
        so every span starts and ends on a character boundary.
        """
        found = self.occurrences(data)
        if not found:
            return found
        found.sort()
        spans: list[tuple[int, int]] = []
        pos = 0
        for start, end in found:
            if start >= pos:
                spans.append((start, end))
            elif start == spans[-1][0]:  # a longer one where the last match starts
                spans[-1] = (start, end)
            else:
                continue
            pos = end
        return spans

    def text_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Character spans of the matches in ``text``, in order; None if there were too many to list."""
        ascii_only = text.isascii()
        data = text.encode("ascii") if ascii_only else text.encode("utf-8", "surrogatepass")
        spans = self.spans(data)
        if spans is None or ascii_only or not spans:
            return spans  # ASCII: byte offsets are character offsets
        out: list[tuple[int, int]] = []
        last = chars = 0
        for start, end in spans:
            chars += len(data[last:start].decode("utf-8", "surrogatepass"))
            first = chars
            chars += len(data[start:end].decode("utf-8", "surrogatepass"))
            last = end
            out.append((first, chars))
        return out
