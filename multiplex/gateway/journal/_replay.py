"""Reading a run journal back: each run's last state, damaged lines reported (docs/operations.md#what-survives-a-crash).

A journal line is one JSON object: ``{"ts": …, "run": <the run document>}``,
with ``"prompt"`` (the parked prompt's turn) while the run waits for a human,
and ``"moved": true`` once the run was handed to another node. The last line
of a run is its state; a line with ``"output_moved": true`` (a finished run's
output moved out of memory, docs/operations.md#finished-output) keeps the
run's place among the others. A line that is not such an object (the torn tail a
``kill -9`` can leave, a hand edit) is logged as a WARNING naming the file and
line, and skipped: it never stops a start.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from multiplex.gateway.runs._run import FINAL

__all__ = ["Entry", "last_states", "read_entries", "retained"]

log = logging.getLogger("multiplex.gateway")

Entry = dict[str, Any]
_TEXT_FIELDS = ("run_id", "profile", "session_id", "context", "status")


def _why_damaged(raw: bytes) -> tuple[Entry | None, str]:
    try:
        entry = json.loads(raw)
    except ValueError:
        return None, "not JSON"
    if not isinstance(entry, dict):
        return None, "not a JSON object"
    run = entry.get("run")
    if not isinstance(run, dict):
        return None, "no run document"
    missing = [key for key in _TEXT_FIELDS if not isinstance(run.get(key), str)]
    if missing:
        return None, f"the run document has no {missing[0]}"
    if not isinstance(run.get("results", []), list):
        return None, "the run document's results is not a list"
    return entry, ""


def read_entries(path: Path) -> list[Entry]:
    """Every well-formed line of ``path`` in order; none when the file is absent."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    entries: list[Entry] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        entry, why = _why_damaged(raw)
        if entry is None:
            log.warning("%s:%d: damaged journal line (%s): skipped", path, number, why)
            continue
        entries.append(entry)
    return entries


def last_states(entries: Iterable[Entry]) -> OrderedDict[str, Entry]:
    """Each run's last line, ordered by when that line was written (oldest first)."""
    states: OrderedDict[str, Entry] = OrderedDict()
    for entry in entries:
        run_id = entry["run"]["run_id"]
        states[run_id] = entry
        if not entry.get("output_moved"):  # a finished run's output moved out: same place
            states.move_to_end(run_id)
    return states


def retained(states: OrderedDict[str, Entry], keep: int) -> list[Entry]:
    """What a compacted journal holds: every unfinished run and the last ``keep``
    finished ones (the registry's own bound), in order; moved runs are gone."""
    finished = [e for e in states.values() if not e.get("moved") and e["run"]["status"] in FINAL]
    kept_ids = {e["run"]["run_id"] for e in finished[max(0, len(finished) - keep) :]}
    return [
        e
        for e in states.values()
        if not e.get("moved")
        and (e["run"]["status"] not in FINAL or e["run"]["run_id"] in kept_ids)
    ]
