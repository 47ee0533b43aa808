"""Reading decision history back from ``<home>/logs/decisions.jsonl`` (docs/approvals.md#records).

The files are the history: every decision of every process that served the
home. ``read_decisions`` merges the files of several homes newest first, with
filters and paging; it reads each file backwards in blocks and stops once it
has enough rows, so a long history costs what the page needs, not the whole
file. ``follow_decisions`` yields lines appended after it started.
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

__all__ = ["DecisionFilter", "decisions_file", "follow_decisions", "read_decisions"]

_BLOCK = 64 * 1024


def decisions_file(home: Path) -> Path:
    """Where the gate appends a home's decisions."""
    return home / "logs" / "decisions.jsonl"


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


def _lines_backwards(path: Path) -> Iterator[bytes]:
    """The file's complete lines, last first."""
    try:
        handle = path.open("rb")
    except OSError:
        return
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
            yield from reversed([line for line in lines if line.strip()])
        if rest.strip():
            yield rest


def _rows_newest_first(
    name: str, path: Path, keep: DecisionFilter, stop_before: float | None
) -> Iterator[dict[str, Any]]:
    for raw in _lines_backwards(path):
        try:
            row = json.loads(raw)
        except ValueError:
            continue  # a torn or hand-mangled line is skipped, never fatal
        if not isinstance(row, dict):
            continue
        row.setdefault("profile", name)
        ts = row.get("ts")
        if stop_before is not None and isinstance(ts, int | float) and ts < stop_before:
            return  # appended in time order: nothing older can match ``since``
        if keep.keeps(row):
            yield row


def read_decisions(
    homes: Mapping[str, Path],
    *,
    keep: DecisionFilter | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Up to ``limit`` records of ``homes`` (name -> home) after skipping ``offset``, newest first."""
    keep = keep or DecisionFilter()
    # A little slack: clocks of two writers may disagree by a moment.
    stop = None if keep.since is None else keep.since - 5.0
    streams = [
        _rows_newest_first(name, decisions_file(home), keep, stop) for name, home in homes.items()
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


def follow_decisions(
    homes: Callable[[], Mapping[str, Path]],
    *,
    keep: DecisionFilter | None = None,
    interval: float = 0.25,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[dict[str, Any]]:
    """Records appended to any of ``homes()`` after the call, in the order seen.

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
            for raw in data[:complete].splitlines():
                try:
                    row = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    row.setdefault("profile", name)
                    if keep.keeps(row):
                        yield row
        first = False
        time.sleep(interval)
