"""Layer 2 with the engine: one Hyperscan pass says which shapes can occur at all.

Most shapes never occur in a given output, and a regex that cannot match still
reads every character. So a Hyperscan database of every shape's anchors (the
literals each match starts with, caseless for the lower-cased shapes) is run
once over the text first. A shape whose anchors are all absent is skipped. A
shape with one anchor present runs its regex, whose own search for that literal
is fast; a shape with several tries its regex only where they occur.

The output is that of :func:`._patterns.apply_patterns`, character for
character: a regex tried at every anchor finds every match it would find
scanning, and the shapes still run in order, each over its predecessor's output.
"""

from __future__ import annotations

import threading
from types import ModuleType

from multiplex.redaction import _engine
from multiplex.redaction._assignment import assignment_at
from multiplex.redaction._engine import Database, escape
from multiplex.redaction._patterns import (
    KINDS,
    PATTERNS,
    SecretPattern,
    apply_patterns,
    fold_case,
    mask,
)

__all__ = ["redact_patterns"]

# Shapes without a literal lead: an expression every match contains. When it
# is absent the shape is skipped; when present the regex scans the whole text.
_GATES = {"discord-bot-token": rb"\.[A-Za-z0-9_-]{6}\."}

# KELVIN SIGN lower-cases to ASCII "k", which the caseless byte scan would not
# see: text holding one takes the reference path (str.lower maps no other
# non-ASCII character to ASCII without changing the length).
_KELVIN = "\u212a"


def _note(expression: int, _start: int, _end: int, _flags: int, present: set[int]) -> None:
    present.add(expression)


def _collect(_expression: int, start: int, _end: int, _flags: int, starts: list[int]) -> None:
    starts.append(start)


class _Shape:
    """One shape as the prefilter sees it."""

    __slots__ = ("_finder", "anchors", "brings", "gate", "pattern")

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
        self.gate = gate  # the gate's expression id, or -1
        self.brings = brings  # anchors its own masks contain: present once it masked
        # Where the anchors are, for a shape that tries its regex at each.
        self._finder: Database | None = None
        if len(anchors) > 1 or pattern.screen is not None:
            caseless = hs.HS_FLAG_CASELESS if pattern.fold else 0
            self._finder = Database(
                hs,
                [escape(a.encode("ascii")) for a, _ in anchors],
                [hs.HS_FLAG_SOM_LEFTMOST | caseless] * len(anchors),
            )

    def starts(self, hay: str, live: list[str]) -> list[int]:
        """Every position of ``hay`` where an anchor starts, ascending."""
        if self._finder is not None and hay.isascii():  # byte offsets are character offsets
            found: list[int] = []
            self._finder.scan(hay.encode("ascii"), _collect, found)
            found.sort()
            return found
        found = []
        find = hay.find
        for anchor in live:
            at = find(anchor)
            while at >= 0:
                found.append(at)
                at = find(anchor, at + 1)
        return sorted(set(found))


class _Prefilter:
    """The anchors of every shape, compiled into one database."""

    __slots__ = ("_db", "_shapes")

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
        self._shapes = []
        for pattern, anchors, gate in found:
            masks = [mask(kind) for kind in extra | {pattern.kind}]
            brings = frozenset(
                i
                for (anchor, folded), i in ids.items()
                if any(anchor in (fold_case(m) if folded else m) for m in masks)
            )
            self._shapes.append(_Shape(hs, pattern, anchors, gate, brings))

    def redact(self, text: str) -> str:
        present: set[int] = set()
        self._db.scan(text.encode("utf-8", "surrogatepass"), _note, present)
        folded: str | None = None
        for shape in self._shapes:
            if not present:
                break
            pattern = shape.pattern
            if shape.gate >= 0:
                if shape.gate not in present:
                    continue
                out = pattern.apply(text)
            else:
                live = [anchor for anchor, i in shape.anchors if i in present]
                if not live:
                    continue
                if pattern.fold:
                    if folded is None:
                        folded = fold_case(text)
                    hay = folded
                else:
                    hay = text
                if len(live) == 1 and pattern.screen is None:
                    # One literal lead: the regex engine's own search for it is
                    # as fast as str.find, and no match is built in Python.
                    out = pattern.apply_to(text, hay)
                elif pattern.kind == "assignment":
                    out = assignment_at(text, hay, shape.starts(hay, live))
                else:
                    out = pattern.apply_at(text, hay, shape.starts(hay, live))
            if out is not text:
                text = out
                folded = None
                present |= shape.brings
        return text


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
