"""The ``assignment`` shape at given starts, in one loop: the engine's hot path.

A realistic log holds a ``key=…`` line every few lines, so this shape is tried
thousands of times per megabyte, and every Python call per try shows. This is
:meth:`._patterns.SecretPattern.apply_at` for the assignment shape with its
screen and locate functions folded in: the name around each start is read once
(the generic path reads it in the screen and again in locate), its decision comes
from the per-name cache, and the output is built with one join. The result is
that of ``apply_at``, character for character (``tests/redaction/test_engine.py``
holds both to a frozen copy of the implementation before this loop).
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.redaction._patterns import (
    _ASSIGNMENT,
    _NAME_TAIL,
    _name_at,
    _name_rule,
    assignment_value,
    mask,
)

__all__ = ["assignment_at"]

_KIND = "assignment"
_MASK = mask(_KIND)


def assignment_at(text: str, hay: str, starts: Sequence[int]) -> str:
    """``text`` with every assignment masked; ``hay`` is ``fold_case(text)``.

    ``starts`` ascend and include every position where a match can start (every
    name fragment of ``hay``).
    """
    match = _ASSIGNMENT.match
    rule_of = _name_rule
    name_at = _name_at
    tail_at = _NAME_TAIL.match
    pieces: list[str] = []
    append = pieces.append
    last = 0  # end of the last mask
    resume = 0  # end of the last match: finditer goes on from there
    final = len(starts) - 1
    for i, at in enumerate(starts):
        if at < resume:
            continue
        if at and ((ch := text[at - 1]).isalnum() or ch in "_.-"):
            name = name_at(text, at)
        else:  # the name starts at the fragment: only its tail to read
            tail = tail_at(text, at)
            name = None if tail is None else text[at : tail.end()]
        rule = 0 if name is None else rule_of(name)
        if not rule:
            # Not a secret name: no mask from here. Its match matters only for
            # where the next try may start, and the shape never spans a line.
            if i == final:
                continue
            bound = hay.find("\n", at)
            if bound < 0:
                bound = len(hay)
            if starts[i + 1] >= bound:
                continue
        m = match(hay, at)
        if m is None:
            continue
        resume = m.end()
        if not rule:
            continue
        found = assignment_value(m, text, _KIND, rule)
        if found is None:
            continue
        start, end, kind = found
        if start < last:  # inside what this shape just masked
            continue
        append(text[last:start])
        append(_MASK if kind == _KIND else mask(kind))
        last = end
    if not pieces:
        return text
    append(text[last:])
    return "".join(pieces)
