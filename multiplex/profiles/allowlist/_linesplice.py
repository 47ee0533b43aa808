"""The line splice: the fast way to rewrite a block ``command_allowlist`` (docs/allowlist.md).

A block list whose items are one-line scalars is a run of lines, described by a
:class:`Layout`: kept items keep their source line (quoting, trailing comment),
removed ones lose theirs, new ones are appended with the same indentation. A
layout also lets a text that another writer changed only inside the list be
re-read line by line (each unknown line parsed on its own) instead of as a whole
document. Used by :mod:`multiplex.profiles.allowlist._roundtrip` (docs/allowlist.md).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from multiplex._errors import ProfileConfigError
from multiplex.profiles.allowlist._grants import GrantText, grant_from_mapping

__all__ = [
    "KEY",
    "Layout",
    "Loader",
    "layout_from",
    "rebuild",
    "relayout",
    "render",
    "splice_plan",
]

KEY = "command_allowlist"
Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
# Line breaks libyaml counts but str.split("\n") does not; their presence disables line splicing.
_ODD_BREAKS = ("\x85", "\u2028", "\u2029")
_TRAILER = re.compile(r"[ ]*(?:#.*)?\r?")  # what may follow an item, or fill a line between items
_DASH = re.compile(r"( *)- +")
_NOT_PLAIN_START = frozenset("&*!|>")  # anchor, alias, tag, block scalar


@dataclass(frozen=True, slots=True)
class Layout:
    """A text as head + region + tail, where region is the list's item and comment lines."""

    text: str
    head: str
    lines: tuple[str, ...]  # each ends with "\n"
    values: tuple[str | None, ...]  # the item on each line; None for a blank or comment line
    tail: str
    dash: str  # indentation and "- " for new items
    newline: str


def relayout(old: Layout, text: str) -> Layout | None:
    """The layout of ``text`` if it differs from ``old.text`` only inside the region."""
    if text == old.text:
        return old
    end = len(text) - len(old.tail)
    if end < len(old.head) or not text.startswith(old.head) or not text.endswith(old.tail):
        return None
    middle = text[len(old.head) : end]
    if not middle.endswith("\n") or any(b in middle for b in _ODD_BREAKS):
        return None
    known = dict(zip(old.lines, old.values, strict=True))
    lines = [line + "\n" for line in middle[:-1].split("\n")]
    values: list[str | None] = []
    indent = old.dash.index("-")
    for line in lines:
        if line in known:
            values.append(known[line])
            continue
        ok, value = _classify(line, indent)
        if not ok:
            return None
        values.append(value)
    return _make_layout(old.head, lines, values, old.tail, old.dash, old.newline)


def _classify(line: str, indent: int) -> tuple[bool, str | None]:
    """(True, item) for an item line at ``indent``, (True, None) for a filler line."""
    content = line[:-1]
    if _TRAILER.fullmatch(content):
        return True, None
    dash = _DASH.match(content)
    if dash is None or len(dash.group(1)) != indent or "\t" in content or "\r" in content[:-1]:
        return False, None
    rest = content[dash.end() :]
    if not rest or rest[0] in _NOT_PLAIN_START:
        return False, None
    try:
        parsed = yaml.load(content, Loader=Loader)
    except yaml.YAMLError:
        return False, None
    if isinstance(parsed, list) and len(parsed) == 1 and isinstance(parsed[0], str):
        return True, parsed[0]
    if isinstance(parsed, list) and len(parsed) == 1 and isinstance(parsed[0], dict):
        return _grant_item(parsed[0])
    return False, None


def _grant_item(data: dict[Any, Any]) -> tuple[bool, str | None]:
    """A one-line flow mapping item (docs/allowlist.md#grants); a malformed one is left to the
    whole-document read, which reports it."""
    try:
        return True, grant_from_mapping(data)
    except ValueError:
        return False, None


def _make_layout(
    head: str,
    lines: Sequence[str],
    values: Sequence[str | None],
    tail: str,
    dash: str,
    newline: str,
) -> Layout | None:
    """Move filler lines at either end of the region into head/tail; None if no item is left."""
    items = [i for i, v in enumerate(values) if v is not None]
    if not items:
        return None
    first, last = items[0], items[-1]
    head += "".join(lines[:first])
    tail = "".join(lines[last + 1 :]) + tail
    lines, values = tuple(lines[first : last + 1]), tuple(values[first : last + 1])
    return Layout(head + "".join(lines) + tail, head, lines, values, tail, dash, newline)


def rebuild(layout: Layout, new: list[str]) -> Layout | None:
    """Keep the lines of surviving items, drop the others, append new items (None: empty list)."""
    if not new:
        return None  # an empty list is `[]` on the key line: a node splice
    items = [v for v in layout.values if v is not None]
    if new[: len(items)] == items:  # the common case, grants only: append, keep every line
        added = tuple(layout.dash + render(v) + layout.newline for v in new[len(items) :])
        grown = layout.lines + added
        text = layout.head + "".join(grown) + layout.tail
        values = layout.values + tuple(new[len(items) :])
        return Layout(text, layout.head, grown, values, layout.tail, layout.dash, layout.newline)
    rows: list[tuple[str, str | None]]
    plan = splice_plan(layout.values, new)
    if plan is not None:  # removals and appends: surviving lines stay where they are
        keep, appended = plan
        rows = [
            (line, value)
            for index, (line, value) in enumerate(zip(layout.lines, layout.values, strict=True))
            if value is None or index in keep
        ]
    else:
        rows, appended = _reorder(layout, new)
    rows += [(layout.dash + render(v) + layout.newline, v) for v in appended]
    return _make_layout(
        layout.head,
        [r[0] for r in rows],
        [r[1] for r in rows],
        layout.tail,
        layout.dash,
        layout.newline,
    )


def _reorder(layout: Layout, new: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The n-th item line holds the n-th new value (its own source line if it had one)."""
    own: dict[str, list[str]] = {}
    for line, value in zip(reversed(layout.lines), reversed(layout.values), strict=True):
        if value is not None:
            own.setdefault(value, []).append(line)
    fill = iter(new)
    rows: list[tuple[str, str | None]] = []
    for line, value in zip(layout.lines, layout.values, strict=True):
        if value is None:
            rows.append((line, None))  # comments stay put
        elif (wanted := next(fill, None)) is not None:
            source = own.get(wanted)
            rows.append(
                (source.pop() if source else layout.dash + render(wanted) + layout.newline, wanted)
            )
    return rows, list(fill)


def splice_plan(values: Sequence[object], new: list[str]) -> tuple[set[int], list[str]] | None:
    """Which existing items to keep and which values to append, so the list becomes ``new``.

    Each value of ``new`` takes the first unused equal item; None when ``new``
    would need a kept item to move.
    """
    free: dict[object, list[int]] = {}
    for index in range(len(values) - 1, -1, -1):
        if values[index] is not None:
            free.setdefault(values[index], []).append(index)
    keep: set[int] = set()
    appended: list[str] = []
    last = -1
    for value in new:
        slots = free.get(value)
        if not slots:
            appended.append(value)
            continue
        index = slots.pop()
        if appended or index < last:
            return None
        keep.add(index)
        last = index
    return keep, appended


def render(value: str) -> str:
    """``value`` as a one-line YAML item that reads back as exactly ``value``
    (a grant as its one-line flow mapping)."""
    if isinstance(value, GrantText):
        return str.__str__(value)
    return _render_scalar(value)


@functools.lru_cache(maxsize=8192)
def _render_scalar(value: str) -> str:
    dumped = yaml.safe_dump([value], allow_unicode=True, width=1 << 30)
    scalar = dumped[2:-1] if dumped.startswith("- ") and dumped.count("\n") == 1 else ""
    if not scalar or any(c in scalar for c in "\r" + "".join(_ODD_BREAKS)):
        scalar = json.dumps(value)  # a JSON string is a valid double-quoted YAML scalar
    if yaml.load("- " + scalar, Loader=Loader) != [value]:
        raise ProfileConfigError(f"cannot write the rule {value[:40]!r} as YAML", key=KEY)
    return scalar


def layout_from(text: str, key: Any, value: Any) -> Layout | None:
    """The line layout of a block list of one-line scalar items, or None for other shapes."""
    if not (isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value):
        return None
    if any(b in text for b in _ODD_BREAKS) or text.count("\r") != text.count("\r\n"):
        return None
    rows = text.split("\n")
    first, last = value.value[0].start_mark.line, value.value[-1].start_mark.line
    if last + 1 >= len(rows) or key.end_mark.line >= first:
        return None  # the last item ends the file without a newline, or an odd key
    values: list[str | None] = [None] * (last - first + 1)
    indent = -1
    for item in value.value:
        start, end = item.start_mark, item.end_mark
        if end.line != start.line or not (
            (isinstance(item, yaml.ScalarNode) and item.tag == _STR_TAG)
            or (isinstance(item, yaml.MappingNode) and item.flow_style)
        ):
            return None
        row = rows[start.line]
        dash = _DASH.fullmatch(row[: start.column])
        if dash is None or indent not in (-1, len(dash.group(1))) or "\t" in row:
            return None
        if not _TRAILER.fullmatch(row[end.column :]) or values[start.line - first] is not None:
            return None
        indent = len(dash.group(1))
        if isinstance(item, yaml.MappingNode):
            ok, grant = _classify(row + "\n", indent)
            if not ok:
                return None
            values[start.line - first] = grant
        else:
            values[start.line - first] = item.value
    for offset, found in enumerate(values):
        if found is None and not _TRAILER.fullmatch(rows[first + offset]):
            return None
    for row in rows[last + 1 :]:  # nothing after the list may continue its last item
        if not _TRAILER.fullmatch(row):
            if len(row) - len(row.lstrip(" ")) > indent:
                return None
            break
    newline = "\r\n" if rows[first].endswith("\r") else "\n"
    head = "".join(row + "\n" for row in rows[:first])
    lines = [row + "\n" for row in rows[first : last + 1]]
    return _make_layout(
        head, lines, values, "\n".join(rows[last + 1 :]), " " * indent + "- ", newline
    )
