"""Layer 2 with the engine: Hyperscan says which shapes can occur, and where.

Most shapes never occur in a given output, and a regex that cannot match still
reads every character. So a Hyperscan database of every shape's anchors (the
literals each match starts with, caseless for the lower-cased shapes) is run
once over the text first. A shape whose anchors are all absent is skipped. A
shape with an anchor present has its regex tried only where its anchors occur,
as another Hyperscan pass reports them; where they are too many to list, its
regex scans the text instead.

A long ASCII text is redacted in pieces cut after a newline: every shape but
``private-key`` matches within one line (see ``_LINE_SPANNING``), so the pieces'
results joined are the whole text's, and each piece stays in the CPU's cache.

The output is that of :func:`._patterns.apply_patterns`, character for
character: a regex tried at every anchor finds every match it would find
scanning, and the shapes still run in order, each over its predecessor's output.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import ModuleType

from multiplex._literals import Database, escape
from multiplex.redaction import _engine
from multiplex.redaction._assignment import assignment_at
from multiplex.redaction._left import split_starts
from multiplex.redaction._patterns import (
    KINDS,
    PATTERNS,
    SecretPattern,
    apply_patterns,
    fold_case,
    mask,
    spliced,
)
from multiplex.redaction._pem import private_key_spans
from multiplex.redaction._shape import Shape

__all__ = ["PIECE", "line_pieces", "redact_patterns"]

# Shapes without a literal lead: an expression every match contains. When it
# is absent the shape is skipped; when present the regex scans the whole text.
_GATES = {"discord-bot-token": rb"\.[A-Za-z0-9_-]{6}\."}

# The one shape whose matches span lines (a PEM block). It runs over the text
# from the first piece holding its anchor on, before that part is cut into
# pieces; every other shape's regex matches no newline, and its look-arounds
# treat a newline as they treat the text's edge.
_LINE_SPANNING = "private-key"
_SPANNING_ANCHOR = "-----BEGIN"

# A text at least twice this long (and ASCII) is redacted in pieces of about
# this many characters, each ending at a newline.
PIECE = 64 * 1024

# KELVIN SIGN lower-cases to ASCII "k", which the caseless byte scan would not
# see: text holding one takes the reference path (str.lower maps no other
# non-ASCII character to ASCII without changing the length).
_KELVIN = "\u212a"


def _note(expression: int, _start: int, _end: int, _flags: int, present: set[int]) -> None:
    present.add(expression)


class _Prefilter:
    """The anchors of every shape, compiled into one database."""

    __slots__ = ("_db", "_shapes", "_spanning_id")

    def __init__(self, hs: ModuleType) -> None:
        expressions: list[bytes] = []
        flags: list[int] = []
        ids: dict[tuple[str, bool], int] = {}
        found: list[tuple[SecretPattern, tuple[tuple[str, int], ...], int]] = []
        for pattern in PATTERNS:
            if not pattern.anchors:
                expressions.append(_GATES[pattern.kind])
                flags.append(hs.HS_FLAG_SINGLEMATCH)
                found.append((pattern, (), len(expressions) - 1))
                continue
            listed: list[tuple[str, int]] = []
            # Anchors are ASCII without "[" or "]" (tested): a mask starts with
            # "[" and ends with "]", so masking cannot make an anchor out of the
            # text around it.
            for anchor in pattern.anchors:
                key = (anchor, pattern.fold)
                if key not in ids:
                    ids[key] = len(expressions)
                    expressions.append(escape(anchor.encode("ascii")))
                    caseless = hs.HS_FLAG_CASELESS if pattern.fold else 0
                    flags.append(hs.HS_FLAG_SINGLEMATCH | caseless)
                listed.append((anchor, ids[key]))
            found.append((pattern, tuple(listed), -1))
        self._db = Database(hs, expressions, flags)
        # The anchors a shape's masks contain ("token" in "[REDACTED:github-token]").
        # Kinds no shape is named for (aws-secret-key) may come from any shape.
        extra = KINDS - {p.kind for p in PATTERNS}
        shapes = []
        for pattern, anchors, gate in found:
            masks = [mask(kind) for kind in extra | {pattern.kind}]
            brings = frozenset(
                i
                for (anchor, folded), i in ids.items()
                if any(anchor in (fold_case(m) if folded else m) for m in masks)
            )
            shapes.append(Shape(hs, pattern, anchors, gate, brings))
        # The line-spanning shape runs first (tested), so it can run over the
        # whole text and the rest piece by piece.
        assert shapes[0].pattern.kind == _LINE_SPANNING
        assert shapes[0].pattern.anchors == (_SPANNING_ANCHOR,)
        self._spanning_id = shapes[0].anchors[0][1]
        self._shapes = tuple(shapes)

    def redact(self, text: str) -> str:
        """``text`` with every shape masked; a long ASCII text piece by piece."""
        if len(text) < 2 * PIECE or not text.isascii():
            return self._redact(text, self._shapes)
        rest = self._shapes[1:]
        out: list[str] = []
        done = 0  # where the pieces redacted so far end
        for piece in line_pieces(text):
            # A piece's anchors tell whether a PEM block starts in it (its
            # start holds no newline), for less than a search of the text.
            present = self._present(piece.encode("ascii"))
            if self._spanning_id in present:
                # None starts before: from here on, the text is masked for
                # PEM blocks first (its matches start at the anchor and look
                # nowhere behind it), then cut into pieces again.
                tail = _private_keys(text[done:])
                out.extend(self._redact(part, rest) for part in line_pieces(tail))
                break
            out.append(self._redact(piece, rest, present))
            done += len(piece)
        return "".join(out)

    def _present(self, encoded: bytes) -> set[int]:
        """The expressions (anchors and gates) that occur in ``encoded``."""
        present: set[int] = set()
        self._db.scan(encoded, _note, present)
        return present

    def _redact(self, text: str, shapes: tuple[Shape, ...], present: set[int] | None = None) -> str:
        """``text`` with ``shapes`` masked; ``present``: its expressions, if scanned already."""
        ascii_only = text.isascii()
        data: bytes | None = None  # ASCII: byte offsets are character offsets
        if present is None:
            encoded = text.encode("utf-8", "surrogatepass")
            present = self._present(encoded)
            data = encoded if ascii_only else None
        folded: str | None = None
        folded_data: bytes | None = None
        after: str | None = None  # the folded text after this shape, when spliced
        for shape in shapes:
            if not present:
                break
            if shape.ids.isdisjoint(present):
                continue
            pattern = shape.pattern
            if shape.gate >= 0:
                out = pattern.apply(text)
            elif pattern.kind == _LINE_SPANNING:
                out = _private_keys(text)
            else:
                live = [anchor for anchor, i in shape.anchors if i in present]
                if pattern.fold:
                    if folded is None:
                        folded = fold_case(text)
                    if folded_data is None and ascii_only:
                        folded_data = folded.encode("ascii")
                    hay, hay_data = folded, folded_data
                else:
                    if data is None and ascii_only:
                        data = text.encode("ascii")
                    hay, hay_data = text, data if ascii_only else None
                # Past one anchor per 256 characters, the regex's own scan costs
                # less than trying it at each; not so the assignment's, which
                # has no literal lead to search for.
                assignment = pattern.kind == "assignment"
                limit = None if assignment else 8 + len(hay) // 256
                starts: list[int] | None = None
                if assignment and hay_data is not None:
                    # Fragments with left names: their lower-case places from
                    # the regex engine, the rest from the finder (_left.py).
                    found, left, rest = split_starts(text, live)
                    if left:
                        if data is None:
                            data = text.encode("ascii")  # capitals: not the folded bytes
                        starts = shape.starts_or_capitals(data, rest, left)
                        if starts is not None and found:
                            starts = sorted(starts + found)
                if starts is None:
                    starts = shape.starts(hay, hay_data, live, limit)
                if starts is None:
                    out = pattern.apply_to(text, hay)
                elif assignment:
                    out = assignment_at(text, hay, starts)
                else:
                    spans = pattern.spans_at(text, hay, starts)
                    if spans and folded is not None and ascii_only:
                        # Masks are ASCII, and an ASCII text folds character by
                        # character: the folded text is spliced, not folded anew.
                        after = spliced(folded, spans, lower=True)
                    out = spliced(text, spans)
            if out is not text:
                text = out
                ascii_only = text.isascii()
                data = None
                folded, after = after, None
                folded_data = None
                present |= shape.brings
        return text


def _private_keys(text: str) -> str:
    """``text`` with the ``private-key`` shape masked (its regex's matches, found faster)."""
    return spliced(text, [(start, end, _LINE_SPANNING) for start, end in private_key_spans(text)])


def line_pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of about ``PIECE`` characters, each but the last ending with a newline.

    A piece runs to the first newline after ``PIECE`` characters; the last may
    be up to half as long again rather than left short.
    """
    piece = PIECE
    size = len(text)
    start = 0
    while start < size:
        cut = text.find("\n", start + piece)
        end = size if cut < 0 or size - cut <= piece // 2 else cut + 1
        yield text[start:end]
        start = end


class _State:
    # None: not built yet; False: the engine failed to build it.
    prefilter: _Prefilter | bool | None = None
    lock = threading.Lock()


def _prefilter(hs: ModuleType) -> _Prefilter | None:
    if _State.prefilter is None:
        with _State.lock:
            if _State.prefilter is None:
                try:
                    _State.prefilter = _Prefilter(hs)
                except hs.error as exc:
                    _engine.disable(f"compiling the layer-2 anchors: {exc}")
                    _State.prefilter = False
    found = _State.prefilter
    return found if isinstance(found, _Prefilter) else None


def redact_patterns(text: str) -> str:
    """``text`` with every layer-2 secret shape masked as ``[REDACTED:<kind>]``."""
    if not text:
        return text  # no shape matches nothing (a cell's empty stdout and stderr)
    hs = _engine.backend()
    if hs is None or (not text.isascii() and _KELVIN in text):
        return apply_patterns(text)
    prefilter = _prefilter(hs)
    if prefilter is None:
        return apply_patterns(text)
    return prefilter.redact(text)
