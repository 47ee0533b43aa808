"""The per-node run journal: what a restarted gateway knows of its runs (docs/operations.md#what-survives-a-crash)."""

from multiplex.gateway.journal._recovery import (
    RESTARTED,
    RESTARTED_PARKED,
    journal_file,
    open_journal,
)
from multiplex.gateway.journal._replay import read_entries
from multiplex.gateway.journal._writer import JournalBusy, RunJournal

__all__ = [
    "RESTARTED",
    "RESTARTED_PARKED",
    "JournalBusy",
    "RunJournal",
    "journal_file",
    "open_journal",
    "read_entries",
]
