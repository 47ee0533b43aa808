"""One layer-2 shape as the prefilter sees it: its anchors, and where they occur.

A shape with an anchor present tries its regex only where its anchors are, as
a Hyperscan pass of its own reports them (``_prefilter.py``).
"""

from __future__ import annotations

from types import ModuleType

from multiplex._literals import Database, escape
from multiplex.redaction._left import cased
from multiplex.redaction._patterns import SecretPattern

__all__ = ["Shape"]

# What must follow an anchor for the shape's regex to match there: the engine
# then reports only those anchors. Each is a superset of what the regex
# accepts after the anchor (no possessive repetition; "[^\t-\r ...]" admits the
# characters \x1c-\x1f that the regex's "\s" excludes). Scanned only over
# ASCII text. "https://" alone is common in logs, a password in a URL is not.
# (The assignment shape has none: its name rule would cost Hyperscan more, on
# the benchmark's log, than its loop spends passing over the fragments that are
# not followed by "=" or ":".)
_FOLLOWERS = {"connection-password": rb"[^\t-\r :/@?#]{0,128}:[^\t-\r /?#]{1,256}@"}

# At most this many finders of some of a shape's anchors are kept (each took
# 0.1-0.5 ms to compile here); past them, the finder of all is used. A
# log's fragments of names are a few of the fourteen, and the assignment's
# finder of four scans in about half the time of its finder of all.
_PARTS = 32


class _Starts(list[int]):
    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


def _collect(_expression: int, start: int, _end: int, _flags: int, starts: _Starts) -> bool:
    starts.append(start)
    return len(starts) > starts.limit  # stop: the regex's own scan is cheaper than so many tries


def _collect_all(_expression: int, start: int, _end: int, _flags: int, starts: list[int]) -> None:
    starts.append(start)


class Shape:
    """One shape as the prefilter sees it."""

    __slots__ = (
        "_cased",
        "_finder",
        "_hs",
        "_parts",
        "anchors",
        "brings",
        "gate",
        "ids",
        "pattern",
    )

    def __init__(
        self,
        hs: ModuleType,
        pattern: SecretPattern,
        anchors: tuple[tuple[str, int], ...],
        gate: int,
        brings: frozenset[int],
    ) -> None:
        self.pattern = pattern
        self.anchors = anchors  # (anchor, expression id); empty for a gated shape
        self.ids = frozenset(i for _, i in anchors) if anchors else frozenset((gate,))
        self.gate = gate  # the gate's expression id, or -1
        self.brings = brings  # anchors its own masks contain: present once it masked
        # Where the anchors are. One expression per anchor: the engine reports
        # the leftmost start of each expression's matches ending at one place,
        # and another anchor inside the same name must be reported as well.
        self._hs = hs
        self._finder = self._compiled([a for a, _ in anchors]) if anchors else None
        # Finders of some of the anchors, by which: built when first needed.
        self._parts: dict[tuple[str, ...], Database] = {}
        # The same, of some anchors with a capital in them only, by both.
        self._cased: dict[tuple[tuple[str, ...], tuple[str, ...]], Database] = {}

    def _compiled(self, anchors: list[str], capitals: tuple[str, ...] = ()) -> Database:
        hs = self._hs
        caseless = hs.HS_FLAG_CASELESS if self.pattern.fold else 0
        follower = _FOLLOWERS.get(self.pattern.kind, b"")
        return Database(
            hs,
            [escape(a.encode("ascii")) + follower for a in anchors] + list(map(cased, capitals)),
            [hs.HS_FLAG_SOM_LEFTMOST | caseless] * len(anchors)
            + [hs.HS_FLAG_SOM_LEFTMOST] * len(capitals),
        )

    def _finder_of(self, live: list[str]) -> Database | None:
        """A finder of the anchors in ``live`` (all the text can hold): fewer scan faster."""
        finder = self._finder
        if finder is None or len(live) == len(self.anchors):
            return finder
        key = tuple(live)
        part = self._parts.get(key)
        if part is None:
            if len(self._parts) >= _PARTS:
                return finder
            try:
                part = self._compiled(live)
            except self._hs.error:
                return finder
            self._parts[key] = part
        return part

    def starts(
        self, hay: str, data: bytes | None, live: list[str], limit: int | None
    ) -> list[int] | None:
        """Every position of ``hay`` where a match can start, ascending; None if over ``limit``.

        ``data`` is ``hay`` as ASCII bytes, or None when it is not ASCII.
        """
        finder = self._finder_of(live) if data is not None else None
        if finder is not None and data is not None:  # byte offsets are character offsets
            if limit is None:
                found: list[int] = []
                finder.scan(data, _collect_all, found)
            else:
                found = _Starts(limit)
                if not finder.scan(data, _collect, found):
                    return None
            found.sort()
            return found
        every: list[int] = []
        find = hay.find
        for anchor in live:
            at = find(anchor)
            while at >= 0:
                every.append(at)
                at = find(anchor, at + 1)
            if limit is not None and len(every) > limit:
                return None
        return sorted(set(every))

    def starts_or_capitals(
        self, data: bytes, live: list[str], capitals: tuple[str, ...]
    ) -> list[int] | None:
        """Where the anchors in ``live`` occur in ASCII ``data``, and those in
        ``capitals`` with a capital in them, ascending; None if no finder could be built."""
        key = (tuple(live), capitals)
        finder = self._cased.get(key)
        if finder is None:
            if len(self._cased) >= _PARTS:
                return None
            try:
                finder = self._compiled(live, capitals)
            except self._hs.error:
                return None
            self._cased[key] = finder
        found: list[int] = []
        finder.scan(data, _collect_all, found)
        found.sort()
        return found
