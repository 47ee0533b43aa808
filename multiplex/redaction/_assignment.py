"""The ``assignment`` shape at given starts, in one loop: the engine's hot path.

A realistic log holds a ``key=…`` line every few lines, so this shape is tried
thousands of times per megabyte, and every Python call per try shows. This is
:meth:`._patterns.SecretPattern.apply_at` for the assignment shape with its
locate function folded in: one regex match per start, the name read from where
the match says it ends, its decision from the per-name cache, the value's checks
inline (those of :func:`._patterns.assignment_value`), and the output built with
one join. The result is that of ``apply_at``, character for character
(``tests/redaction/test_engine.py`` holds both to a frozen copy of the
implementation before this loop).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from re import Match

from multiplex.redaction._left import learn
from multiplex.redaction._patterns import (
    _ASSIGNMENT,
    _AWS_SECRET,
    _AWS_SECRET_KIND,
    _NOT_SECRET_LEADS,
    _NOT_SECRET_VALUES,
    _name_at,
    _name_rule,
    mask,
)

__all__ = ["assignment_at"]

_KIND = "assignment"
_MASK = mask(_KIND)
_AWS_MASK = mask(_AWS_SECRET_KIND)
_NAME = _ASSIGNMENT.groupindex["name"]
_BARE = _ASSIGNMENT.groupindex["bare"]
# _NAME_TAIL's bound: the name read from a fragment on is at most this long.
_TAIL = 48
# _name_rule's answers for the names seen most, in a plain dict: a log repeats
# a few names thousands of times, and a dict lookup costs half the lru_cache's.
_RULES: dict[str, int] = {}
_RULES_MAX = 1024
# What [\w.-] matches in ASCII text: there, a set lookup answers isalnum().
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# Names found to be left (rule 0), shorter than _TAIL, by first character: the
# latest one each. A log repeats a few ("session_len"); see _ascii_at.
_LEFT: dict[str, str] = {}


def assignment_at(text: str, hay: str, starts: Sequence[int]) -> str:
    """``text`` with every assignment masked; ``hay`` is ``fold_case(text)``.

    ``starts`` ascend and include every position where a match can start (it may
    hold more: a start where the regex does not match is passed over).
    """
    if not starts:
        return text
    if text.isascii():
        return _ascii_at(text, hay, starts)
    match = _ASSIGNMENT.match
    rules = _RULES
    known_rule = rules.get
    pieces: list[str] = []
    append = pieces.append
    last = 0  # end of the last mask
    resume = 0  # end of the last match: finditer goes on from there
    for at in starts:
        if at < resume:
            continue
        m = match(hay, at)
        if m is None:
            continue
        resume = m.end()
        # Lower-casing may change what counts as a name character: the name
        # is read from ``text`` itself.
        name = _name_at(text, at)
        if name is None:
            continue
        rule = known_rule(name)
        if rule is None:
            rule = _name_rule(name)
            if len(rules) < _RULES_MAX:  # bounded: names may all differ
                rules[name] = rule
        if not rule:
            continue
        last = _masked(text, m, rule, last, append)
    if not pieces:
        return text
    append(text[last:])
    return "".join(pieces)


def _masked(text: str, m: Match[str], rule: int, last: int, append: Callable[[str], None]) -> int:
    """Appends the text up to the match's value and its mask, if the value is masked;
    returns the end of the last mask."""
    group = m.lastindex  # the value's: dq, sq or bare, the last group to close
    start, end = m.span(group)  # type: ignore[arg-type]  # never None: one always matches
    if start < last:  # inside what this shape just masked
        return last
    size = end - start
    if size < 4:
        return last
    value = text[start:end]
    first = value[0]
    if (
        first in _NOT_SECRET_LEADS
        or value.count(first) == size
        # Every value in _NOT_SECRET_VALUES is a word: isalpha() is cheaper than lower().
        or (size <= 9 and value.isalpha() and value.lower() in _NOT_SECRET_VALUES)
        or (group == _BARE and value[-1] == ")" and "(" in value)
    ):
        return last
    append(text[last:start])
    append(_AWS_MASK if rule == 2 and _AWS_SECRET.fullmatch(value) else _MASK)
    return end


def _ascii_at(text: str, hay: str, starts: Sequence[int]) -> str:
    """:func:`assignment_at` for ASCII text, where ``hay`` is ``text.lower()``.

    The name ends where the match's group says. A start whose name is one
    already found to be left (``_LEFT``) is passed over without its match, which
    is made only if the next start is on the same line: a match holds no
    newline, so where it would have ended cannot matter to the starts after.
    """
    match = _ASSIGNMENT.match
    rules = _RULES
    known_rule = rules.get
    left = _LEFT.get
    aws = _AWS_SECRET.fullmatch
    leads, plain = _NOT_SECRET_LEADS, _NOT_SECRET_VALUES
    name_chars = _NAME_CHARS
    newline = hay.find
    pieces: list[str] = []
    append = pieces.append
    last = 0  # end of the last mask
    resume = 0  # end of the last match: finditer goes on from there
    passed = -1  # a start passed over without its match, if the last one was
    any_left = bool(_LEFT)
    for at in starts:
        if at < resume:  # (never just after a start passed over: resume is before it)
            continue
        if passed >= 0:
            if newline("\n", passed, at) < 0 and (m := match(hay, passed)) is not None:
                resume = m.end()  # on this line: the match passed over counts
            passed = -1
            if at < resume:
                continue
        if (
            any_left
            and (known := left(text[at])) is not None
            and text.startswith(known, at)
            and text[at + len(known) : at + len(known) + 1] not in name_chars
            and (not at or text[at - 1] not in name_chars)
        ):
            passed = at
            continue
        m = match(hay, at)
        if m is None:
            continue
        resume = m.end()
        alone = not at or text[at - 1] not in name_chars  # the name starts at the fragment
        if alone:
            end = m.end(_NAME)
            name = text[at : end if end - at <= _TAIL else at + _TAIL]
        else:
            whole = _name_at(text, at)  # the name starts before the fragment
            if whole is None:
                continue
            name = whole
        rule = known_rule(name)
        if rule is None:
            rule = _name_rule(name)
            if len(rules) < _RULES_MAX:  # bounded: names may all differ
                rules[name] = rule
            if not rule and alone and len(name) < _TAIL:
                learn(name)
        if not rule:
            if alone and len(name) < _TAIL:
                _LEFT[name[0]] = name  # the latest, per first letter
            continue
        # The value's checks, cheapest first (assignment_value, inline).
        group = m.lastindex  # the value's: dq, sq or bare, the last group to close
        start, end = m.span(group)  # type: ignore[arg-type]  # never None: one always matches
        if start < last:  # inside what this shape just masked
            continue
        size = end - start
        if size < 4:
            continue
        value = text[start:end]
        first = value[0]
        if (
            first in leads
            or value.count(first) == size
            # Every value in plain is a word: isalpha() is cheaper than lower().
            or (size <= 9 and value.isalpha() and value.lower() in plain)
            or (group == _BARE and value[-1] == ")" and "(" in value)
        ):
            continue
        append(text[last:start])
        append(_AWS_MASK if rule == 2 and aws(value) else _MASK)
        last = end
    if not pieces:
        return text
    append(text[last:])
    return "".join(pieces)
