"""A restarted gateway's runs: each one its journal left unfinished ends, none runs again (docs/gateway.md#after-a-crash).

At start the gateway reads its node's journal. A run that was queued or
running ends ``failed`` with cause ``gateway restarted``; a run parked on a
human ends ``cancelled`` with cause ``gateway restarted before the prompt was
answered``, and its prompt gets the decision record it never had: outcome
``cancelled``, decided and answered by nobody; unless that record says it was
answered (the crash came between the answer and the run's line saying it runs
again): then the run ends ``failed``, ``gateway restarted after the prompt was
answered, before its command ran``, and the answer's record stands alone. The decision records are written
before the journal is compacted, so a second crash between the two repeats a
record rather than losing one. Nothing is run again.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from multiplex.approval import DecisionFilter, read_decisions
from multiplex.approval._decision import Danger, DecidedBy, Decision, Outcome
from multiplex.gateway.http._logs import log_event
from multiplex.gateway.journal._replay import Entry, retained
from multiplex.gateway.journal._writer import JournalBusy, RunJournal
from multiplex.gateway.runs._run import FINAL, Run

if TYPE_CHECKING:
    from multiplex.supervision import Supervisor

__all__ = ["RESTARTED", "RESTARTED_PARKED", "journal_file", "open_journal"]

log = logging.getLogger("multiplex.gateway")

RESTARTED = "gateway restarted"
RESTARTED_PARKED = "gateway restarted before the prompt was answered"
RESTARTED_ANSWERED = "gateway restarted after the prompt was answered, before its command ran"


def journal_file(sup: Supervisor) -> str:
    """The journal's path inside the folder of ``multiplex.yaml``: one file per node."""
    cluster = sup.config.cluster
    node = cluster.node_id if cluster is not None else "gateway"
    return f".multiplex/journal/{node}.jsonl"


def open_journal(sup: Supervisor, *, keep: int) -> tuple[RunJournal | None, list[Run]]:
    """This node's journal, its unfinished runs ended and the file compacted, and the
    finished runs it keeps (oldest first) for the registry.

    None without a ``multiplex.yaml`` (nowhere to keep state) or when the journal
    cannot be opened (a WARNING says why; the gateway serves without one).
    """
    if sup.config.source is None:
        return None, []
    try:
        journal = RunJournal(
            sup.config.base_dir, journal_file(sup), keep=keep, redact=sup.gate.recorder.redact
        )
    except JournalBusy as exc:
        log.warning("%s; runs are not journaled", exc)
        return None, []
    except OSError as exc:
        log.warning("cannot open the run journal %s: %s", journal_file(sup), exc)
        return None, []
    now = time.time()
    states: OrderedDict[str, Entry] = OrderedDict()
    ended = 0
    for run_id, entry in journal.states().items():
        if entry.get("moved"):
            continue
        if entry["run"]["status"] not in FINAL:
            entry = _ended(sup, entry, now)
            ended += 1
        states[run_id] = entry
    kept = retained(states, keep)
    try:
        journal.rewrite(kept)
    except OSError as exc:
        log.warning("cannot compact the run journal %s: %s", journal.path, exc)
    if states:
        log_event("journal.recovered", file=str(journal.path), runs=len(kept), ended=ended)
    return journal, [restored(entry["run"], entry.get("commands")) for entry in kept]


def _ended(sup: Supervisor, entry: Entry, now: float) -> Entry:
    doc = dict(entry["run"])
    pending = doc.get("pending_approval")
    parked = doc["status"] == "waiting_for_approval" and isinstance(pending, dict)
    # Answered (its record is on disk) in the moment before the run was noted running again:
    # its command never ran, and nobody may be said to have left it unanswered.
    answered = isinstance(pending, dict) and parked and _answered(sup, doc["profile"], pending)
    status = "cancelled" if parked and not answered else "failed"
    error = RESTARTED_ANSWERED if answered else RESTARTED_PARKED if parked else RESTARTED
    doc.update(status=status, error=error, pending_approval=None, finished_at=now)
    if isinstance(pending, dict) and parked and not answered:
        _record_prompt(sup, doc, pending, entry.get("prompt"), now)
    sup.metrics.runs.labels(doc["profile"], status).inc()
    log_event(
        "run.finished",
        run_id=doc["run_id"],
        profile=doc["profile"],
        session_id=doc["session_id"],
        status=status,
        commands_run=len(doc.get("results") or []),
        error=doc["error"],
    )
    return {"ts": now, "run": doc, "commands": entry.get("commands") or []}


def _answered(sup: Supervisor, name: str, pending: dict[str, Any]) -> bool:
    """Whether the profile's decision records hold an answer to ``pending`` (read back from
    the newest to the prompt's opening only)."""
    profile = sup.profiles.get(name)
    created = pending.get("created_at")
    if profile is None or not isinstance(created, int | float):
        return False
    try:
        rows = read_decisions(
            {name: profile.home}, keep=DecisionFilter(since=float(created)), limit=10_000
        )
    except OSError:
        return False  # unreadable: the prompt is recorded as unanswered, as before
    wanted = pending.get("approval_id")
    return any(r.get("approval_id") == wanted and r.get("answered_by") != "nobody" for r in rows)


def _record_prompt(
    sup: Supervisor, doc: dict[str, Any], pending: dict[str, Any], prompt: Any, now: float
) -> None:
    """The decision record of a prompt nobody answered before the crash (never "denied")."""
    name = doc["profile"]
    profile = sup.profiles.get(name)
    if profile is None:
        log.warning(
            "run %s: profile %r is no longer served: its parked prompt has no decision record",
            doc["run_id"],
            name,
        )
        return
    created = pending.get("created_at")
    waited = int((now - created) * 1000) if isinstance(created, int | float) else 0
    decision = Decision(
        Outcome.CANCELLED, RESTARTED_PARKED, DecidedBy.NOBODY, None, profile.epoch, max(0, waited)
    )
    dangers = tuple(
        Danger(str(d.get("pattern")), str(d.get("segment")))
        for d in pending.get("dangers") or ()
        if isinstance(d, dict)
    )
    turn = prompt.get("turn_id") if isinstance(prompt, dict) else None
    sup.gate.recorder.record(
        profile=name,
        home=profile.home,
        session=doc["session_id"],
        turn_id=str(turn or ""),
        context=doc["context"],
        command=str(pending.get("command") or ""),
        decision=decision,
        choice="cancelled",
        extra={"approval_id": pending.get("approval_id"), "run_id": doc["run_id"]},
        dangers=dangers,
    )


def restored(doc: dict[str, Any], commands: Any = None) -> Run:
    """A finished run of an earlier process, as its journal kept it (its commands redacted)."""
    listed = [c for c in commands if isinstance(c, str)] if isinstance(commands, list) else []
    run = Run(doc["run_id"], doc["profile"], doc["session_id"], doc["context"], listed)
    run.kind = "code" if doc.get("kind") == "code" else "commands"
    created, finished = doc.get("created_at"), doc.get("finished_at")
    if isinstance(created, int | float):
        run.created_at = float(created)
    run.finished_at = float(finished) if isinstance(finished, int | float) else None
    run.status = doc["status"]
    asked_by = doc.get("asked_by")
    run.asked_by = asked_by if isinstance(asked_by, str) else ""
    run.results = list(doc.get("results") or [])
    error = doc.get("error")
    run.error = error if isinstance(error, str) else None
    run.done.set()
    return run
