"""Reading decision history back from ``<home>/logs/decisions.jsonl`` (docs/approvals.md#records).

The files are the history: every decision of every process that served the
home. ``read_decisions`` merges the files of several homes newest first, with
filters and paging; it reads each file backwards in blocks and stops once it
has enough rows, so a long history costs what the page needs, not the whole
file. ``follow_decisions`` yields lines appended after it started. A line that is
not a JSON object (a torn write of an old version, a hand edit) is never
skipped in silence: it is reported as a :class:`DamagedRecord` with its file
and line number (docs/operations.md#a-full-disk).
"""

from __future__ import annotations

import heapq
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DamagedRecord",
    "DecisionFilter",
    "decisions_file",
    "each_decision",
    "follow_decisions",
    "read_decisions",
]

_BLOCK = 64 * 1024


def decisions_file(home: Path) -> Path:
    """Where the gate appends a home's decisions."""
    return home / "logs" / "decisions.jsonl"


@dataclass(frozen=True, slots=True)
class DamagedRecord:
    """A line of a profile's ``decisions.jsonl`` that is not a record; ``line`` is 1-based."""

    profile: str
    path: Path
    line: int
    why: str

    def as_dict(self) -> dict[str, Any]:
        """The API's form: the file named inside the home, never its absolute path."""
        return {
            "profile": self.profile,
            "file": "logs/decisions.jsonl",
            "line": self.line,
            "why": self.why,
        }

    def message(self, shown_path: str) -> str:
        """``<path>:<line>: damaged record (<why>): skipped`` (the CLI's stderr line)."""
        if not self.line:  # the whole file
            return f"{shown_path}: {self.why}: its records are not shown"
        return f"{shown_path}:{self.line}: damaged record ({self.why}): skipped"


Damaged = Callable[[DamagedRecord], None]


def _why_damaged(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        row = json.loads(raw)
    except ValueError:
        return None, "not JSON"
    if not isinstance(row, dict):
        return None, "not a JSON object"
    return row, ""


def _line_number(path: Path, offset: int) -> int:
    """The 1-based number of the line starting at ``offset`` (read only for a damaged line)."""
    count = 0
    with path.open("rb") as handle:
        left = offset
        while left > 0:
            chunk = handle.read(min(_BLOCK, left))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
    return count + 1


@dataclass(frozen=True, slots=True)
class DecisionFilter:
    """Which records to keep; ``None`` keeps all. ``since``/``until`` are epoch seconds."""

    outcome: frozenset[str] | None = None
    session: str | None = None
    context: str | None = None
    since: float | None = None
    until: float | None = None

    def keeps(self, row: dict[str, Any]) -> bool:
        ts = row.get("ts")
        if not isinstance(ts, int | float):
            return False
        if self.since is not None and ts < self.since:
            return False
        if self.until is not None and ts >= self.until:
            return False
        if self.outcome is not None and row.get("outcome") not in self.outcome:
            return False
        if self.session is not None and row.get("session") != self.session:
            return False
        return self.context is None or row.get("context") == self.context


def _lines_backwards(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's lines that are not blank, last first, each with its byte offset."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return  # no record yet (any other error is the caller's: never an empty history)
    with handle:
        end = handle.seek(0, os.SEEK_END)
        rest = b""
        while end > 0:
            start = max(0, end - _BLOCK)
            handle.seek(start)
            chunk = handle.read(end - start) + rest
            end = start
            lines = chunk.split(b"\n")
            rest = lines.pop(0) if start > 0 else b""
            offset = start + len(rest) + (1 if start > 0 else 0)
            found: list[tuple[int, bytes]] = []
            for line in lines:
                if line.strip():
                    found.append((offset, line))
                offset += len(line) + 1
            yield from reversed(found)
        if rest.strip():
            yield 0, rest


def _rows_newest_first(
    name: str,
    path: Path,
    keep: DecisionFilter,
    stop_before: float | None,
    damaged: Damaged | None,
) -> Iterator[dict[str, Any]]:
    try:
        for offset, raw in _lines_backwards(path):
            row, why = _why_damaged(raw)
            if row is None:
                if damaged is not None:
                    damaged(DamagedRecord(name, path, _line_number(path, offset), why))
                continue  # reported, never fatal
            row.setdefault("profile", name)
            ts = row.get("ts")
            if stop_before is not None and isinstance(ts, int | float) and ts < stop_before:
                return  # appended in time order: nothing older can match ``since``
            if keep.keeps(row):
                yield row
    except OSError as exc:  # unreadable (its mode, an I/O error): said, never a clean slate
        if damaged is None:
            raise
        damaged(DamagedRecord(name, path, 0, f"cannot read the file: {exc.strerror or exc}"))


def read_decisions(
    homes: Mapping[str, Path],
    *,
    keep: DecisionFilter | None = None,
    limit: int = 50,
    offset: int = 0,
    damaged: list[DamagedRecord] | None = None,
) -> list[dict[str, Any]]:
    """Up to ``limit`` records of ``homes`` (name -> home) after skipping ``offset``, newest first.

    Damaged lines met on the way are appended to ``damaged`` when it is given.
    """
    keep = keep or DecisionFilter()
    # A little slack: clocks of two writers may disagree by a moment.
    stop = None if keep.since is None else keep.since - 5.0
    streams = [
        _rows_newest_first(
            name, decisions_file(home), keep, stop, None if damaged is None else damaged.append
        )
        for name, home in homes.items()
    ]
    merged = heapq.merge(*streams, key=lambda r: -float(r["ts"]))
    out: list[dict[str, Any]] = []
    for index, row in enumerate(merged):
        if index < offset:
            continue
        out.append(row)
        if len(out) >= limit:
            break
    return out


def each_decision(
    homes: Mapping[str, Path], *, keep: DecisionFilter | None = None
) -> Iterator[dict[str, Any]]:
    """Every record of ``homes`` that ``keep`` keeps, home after home, each newest first:
    one at a time, for a reader that needs no order and must not hold them all."""
    keep = keep or DecisionFilter()
    stop = None if keep.since is None else keep.since - 5.0
    for name, home in homes.items():
        yield from _rows_newest_first(name, decisions_file(home), keep, stop, None)


def follow_decisions(
    homes: Callable[[], Mapping[str, Path]],
    *,
    keep: DecisionFilter | None = None,
    interval: float = 0.25,
    stop: Callable[[], bool] = lambda: False,
    damaged: Damaged | None = None,
) -> Iterator[dict[str, Any]]:
    """Records appended to any of ``homes()`` after the call, in the order seen.

    ``damaged`` is called with each appended line that is not a record.

    ``homes`` is called on every poll, so homes added meanwhile are followed
    (from their current end: only what is appended from then on).
    """
    keep = keep or DecisionFilter()
    offsets: dict[Path, int] = {}
    first = True
    while not stop():
        for name, home in homes().items():
            path = decisions_file(home)
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if path not in offsets:
                offsets[path] = size if first else 0
            if size < offsets[path]:
                offsets[path] = 0  # truncated or replaced: start over
            if size == offsets[path]:
                continue
            with path.open("rb") as handle:
                handle.seek(offsets[path])
                data = handle.read(size - offsets[path])
            complete = data.rfind(b"\n") + 1  # a half-written last line waits
            offsets[path] += complete
            start = offsets[path] - complete
            for raw in data[:complete].split(b"\n"):
                at, start = start, start + len(raw) + 1
                if not raw.strip():
                    continue
                row, why = _why_damaged(raw)
                if row is None:
                    if damaged is not None:
                        damaged(DamagedRecord(name, path, _line_number(path, at), why))
                    continue
                row.setdefault("profile", name)
                if keep.keeps(row):
                    yield row
        first = False
        time.sleep(interval)
