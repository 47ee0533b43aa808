"""The permanent allowlist store of one profile (docs/allowlist.md).

``command_allowlist`` in ``<home>/config.yaml`` belongs to the operator. The
store keeps this process's view of it and writes its own grants through to it
without ever undoing an edit the operator made by hand:

    baseline  = the list the file held the last time this process synchronised
    effective = on_disk_now ∪ (in_memory − baseline)

recomputed on every write and every reload, after which the baseline is what
the file holds. A hand revocation therefore disappears from memory at once, a
hand addition is never removed, and only :meth:`AllowlistStore.revoke` removes.

An entry may be a grant with conditions (:mod:`multiplex.profiles.allowlist._grants`):
:meth:`AllowlistStore.ruleset` applies them at the moment it is asked,
:meth:`AllowlistStore.spend` takes a use in the file under its lock, and
:attr:`AllowlistStore.endings` tells when one stops approving
(:mod:`multiplex.profiles.allowlist._grant_endings`).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from multiplex._errors import RuleSyntaxError
from multiplex.profiles._loader import read_allowlist
from multiplex.profiles._yamlread import line_of
from multiplex.profiles.allowlist._grant_endings import GrantEnded, GrantEndings
from multiplex.profiles.allowlist._granted_rules import GrantedRules, live_rules
from multiplex.profiles.allowlist._grants import GrantText, entry_rule, make_grant
from multiplex.profiles.allowlist._roundtrip import AllowlistMemo, commit_grants, update_allowlist
from multiplex.profiles.allowlist._snapshot import (
    InvalidRule,
    ReconcileResult,
    Snapshot,
    parsed_rule,
)
from multiplex.shell import Rule, parse_rule

__all__ = ["AllowlistStore", "InvalidRule", "ReconcileResult"]

log = logging.getLogger(__name__)


class AllowlistStore:
    """One profile's command_allowlist: the operator's file plus this process's own grants.

    Readers (:meth:`allows`, :meth:`match`, :meth:`rules`, :meth:`ruleset`) never
    lock: they read an immutable snapshot that writers swap whole. :meth:`grant`
    and :meth:`revoke` write through to the file under a cross-process lock; a
    failed write is logged at WARNING, never raised, and retried on the next
    write, while the change stays in effect for this process.
    """

    def __init__(
        self,
        config_path: Path,
        *,
        initial: Iterable[str] | None = None,
        lock_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # Path(a Path) parses its text again: a home's store is made with one (10,000 at start).
        self._path = config_path if isinstance(config_path, Path) else Path(config_path)
        self._lock_timeout = lock_timeout
        self._clock = clock  # what "now" is for an expiry (seconds since the epoch)
        # Guards the state below, held briefly: its only I/O is one re-read of the file to
        # name the line of an entry that does not parse (each such text once, then cached).
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # one write of this store at a time
        self._writes = 0
        self._memo = AllowlistMemo()
        on_disk = list(initial) if initial is not None else read_allowlist(self._path)
        self._disk: list[str] = on_disk  # the file as last synchronised: the baseline, in order
        self._pending: dict[str, None] = {}  # in_memory − baseline: grants not on disk (ordered)
        self._revoking: set[str] = set()  # revocations not yet written to disk
        self._parsed: dict[str, Rule | InvalidRule] = {}
        self._snapshot = self._build_snapshot()
        self.endings = GrantEndings(self._path, clock)  # expired and spent grants, told once

    @property
    def config_path(self) -> Path:
        """The config.yaml this store reads and writes."""
        return self._path

    @property
    def unsaved(self) -> frozenset[str]:
        """Grants in effect for this process that are not on disk yet."""
        with self._lock:
            disk = set(self._disk)
            return frozenset(p for p in self._pending if p not in disk)

    # -- reading (lock-free) --------------------------------------------------
    def rules(self) -> list[str]:
        """Effective rule texts: the on-disk order first, then unpersisted grants."""
        return list(self._snapshot.texts)

    def ruleset(self, cwd: Path | None = None, *, spent: bool = False) -> GrantedRules:
        """The rules in effect now (rules that do not parse are left out).

        Grants that expired, or (unless ``spent``) have no use left, are left out;
        bound grants check their files, relative names under ``cwd`` (else the
        home's ``workspace/``) (docs/allowlist.md#grants). ``spent`` is for the check of a line
        already approved, whose own use may have been the last.
        """
        snapshot = self._snapshot
        if not snapshot.grants:
            return snapshot.ruleset()
        base = cwd if cwd is not None else self._path.parent / "workspace"  # the local default
        return live_rules(
            snapshot.plain, snapshot.grants, snapshot.live, self._clock(), base, spent, self.spend
        )

    def grants(self) -> tuple[GrantText, ...]:
        """The entries with conditions (an expiry, uses, bound files), in the file's order."""
        return tuple(grant for _, grant in self._snapshot.grants)

    def expire_due(self) -> list[GrantEnded]:
        """Tell the grants that expired since the last call (the owner's timer calls this)."""
        return self.endings.due(self.grants())

    @property
    def indexed(self) -> bool:
        """Whether the current RuleSet is built (the first match after a change builds it)."""
        return self._snapshot.indexed

    @property
    def size(self) -> int:
        """How many effective rules allow something (``allowlist_size``: invalid ones do not count)."""
        return len(self._snapshot.rules)

    def invalid(self) -> tuple[InvalidRule, ...]:
        """Effective entries that do not parse, with their line in the file (docs/allowlist.md)."""
        return self._snapshot.invalid

    def match(self, argv: Sequence[str]) -> str | None:
        """The text of the first effective rule that allows ``argv``, or None."""
        rule = self.ruleset().match(argv)
        return rule.text if rule is not None else None

    def allows(self, argv: Sequence[str]) -> bool:
        """True if an effective rule allows ``argv``."""
        return self.ruleset().match(argv) is not None

    # -- changing ---------------------------------------------------------------
    def grant(
        self,
        rule: str,
        *,
        expires: dt.datetime | None = None,
        uses: int | None = None,
        bind: Mapping[str, str] | None = None,
    ) -> None:
        """Allow ``rule`` now and write it through to the file.

        With ``expires``, ``uses`` or ``bind`` (file name: ``sha256:<hex>``) the entry
        is a grant mapping (docs/allowlist.md#grants). Raises ``RuleSyntaxError``
        for a rule that does not parse; never raises for a failed write (logged;
        kept in memory; retried on the next write). A grant made after the
        operator removed the same rule by hand is a new approval: it is written again.
        """
        text = make_grant(parse_rule(rule).text, expires=expires, uses=uses, bind=bind)
        with self._lock:
            self._revoking.discard(text)
            # Granting removes the text from the baseline (docs/allowlist.md: in_memory − baseline),
            # so the write adds it even if the file held it once and lost it by hand.
            self._pending[text] = None
            self._publish()
        self._write()

    def grant_saved(self, rule: str, *, bind: Mapping[str, str] | None = None) -> None:
        """Like :meth:`grant`, but return only once the rule is in the file.

        A failed write raises (``OSError`` for a full disk) and takes the grant
        back: a human's "always" that could not be saved is not acknowledged
        (docs/operations.md#a-full-disk), so it must not be in effect either.
        """
        text = make_grant(parse_rule(rule).text, bind=bind)
        with self._lock:
            had = text in self._pending
            self._revoking.discard(text)
            self._pending[text] = None
            self._publish()
        try:
            self._write(raising=True)
        except BaseException:
            with self._lock:
                if not had:
                    self._pending.pop(text, None)
                    self._publish()
            raise

    def revoke(self, rule: str) -> bool:
        """Remove ``rule`` from memory and from the file; True if it was present anywhere.

        This is the only way the process removes an entry (docs/allowlist.md). A failed
        write is logged, not raised; the rule stays revoked in this process and
        the removal is retried on the next write.
        """
        if not isinstance(rule, str) or not rule.strip():
            raise RuleSyntaxError(f"invalid rule {rule!r}: empty rule")
        norm = rule.strip()
        with self._lock:
            present = any(entry_rule(text).strip() == norm for text in self._snapshot.texts)
            for text in [p for p in self._pending if entry_rule(p).strip() == norm]:
                del self._pending[text]
            self._revoking.add(norm)
            self._publish()
        seen = self._write()
        return present or any(entry_rule(text).strip() == norm for text in seen)

    def spend(self, grant: GrantText) -> bool:
        """Take one use of ``grant`` in the file, under its lock; False if none is left.

        The count is read under the lock, so of two processes taking the last use
        only one succeeds (docs/allowlist.md#uses). A grant not on disk, or a
        write that fails, takes no use and returns False.
        """
        taken: list[GrantText] = []

        def compute(on_disk: list[str]) -> list[str]:
            new = list(on_disk)
            for index, entry in enumerate(new):
                if isinstance(entry, GrantText) and grant.same_grant(entry) and entry.uses:
                    taken.append(entry.with_uses(entry.uses - 1))
                    new[index] = taken[0]
                    break
            return new

        with self._write_lock:
            try:
                written = update_allowlist(
                    self._path, compute, lock_timeout=self._lock_timeout, memo=self._memo
                )
            except Exception as exc:  # a use that cannot be written is not taken
                log.warning("%s: command_allowlist: could not take a use (%s)", self._path, exc)
                return False
            with self._lock:
                self._synchronised(written, written_revocations=frozenset())
                self._writes += 1
        if taken and taken[0].uses == 0:
            self.endings.spent(taken[0])
        return bool(taken)

    def reload(self) -> ReconcileResult:
        """Re-read the file and reconcile; a malformed file raises ProfileConfigError."""
        with self._write_lock:  # not interleaved with this store's own writes
            on_disk = read_allowlist(self._path)
            return self.reconcile(on_disk)

    @property
    def writes(self) -> int:
        """How many times this store has written the file (a reader's cache key)."""
        return self._writes

    @contextmanager
    def writes_paused(self) -> Iterator[None]:
        """No write of this store runs inside the block.

        A caller that reads the file itself and then calls :meth:`reconcile`
        (the profile's reload) does both inside, so a grant written between
        its read and its reconcile cannot drop out of memory.
        """
        with self._write_lock:
            yield

    def reconcile(self, on_disk: Sequence[str]) -> ReconcileResult:
        """Adopt ``on_disk`` (already read and validated by the caller) as the file's list.

        ``effective = on_disk ∪ (in_memory − baseline)``; the baseline becomes
        ``on_disk``. Entries the operator removed leave memory now.
        """
        with self._lock:
            return self._synchronised(list(on_disk), written_revocations=frozenset())

    # -- internals --------------------------------------------------------------
    def _write(self, *, raising: bool = False) -> list[str]:
        """Write pending grants and revocations; return the list read under the lock."""
        with self._write_lock:
            with self._lock:
                pending = list(self._pending)
                revoking = frozenset(self._revoking)
            seen: list[str] = []

            def compute(on_disk: list[str]) -> list[str]:
                seen[:] = on_disk
                kept = [t for t in on_disk if entry_rule(t).strip() not in revoking]
                present = set(kept)
                return kept + [text for text in pending if text not in present]

            try:
                # Revocations are rare; they write alone and see the file first; so do grants
                # with conditions (an intent file carries rule texts only).
                if revoking or any(isinstance(p, GrantText) for p in pending):
                    written = update_allowlist(
                        self._path, compute, lock_timeout=self._lock_timeout, memo=self._memo
                    )
                else:  # grants share one write with other processes granting now
                    written = commit_grants(
                        self._path, pending, lock_timeout=self._lock_timeout, memo=self._memo
                    )
                    seen = written
            except Exception as exc:  # docs/allowlist.md: a failed write never raises into the gate
                if raising:
                    raise
                log.warning(
                    "%s: command_allowlist: could not save (%s); %d grant(s) and %d revocation(s)"
                    " stay in effect for this process and are retried on the next write",
                    self._path,
                    exc,
                    len(pending),
                    len(revoking),
                )
                return seen
            with self._lock:
                self._synchronised(written, written_revocations=revoking)
                self._writes += 1
            return seen

    def _synchronised(
        self, on_disk: list[str], *, written_revocations: frozenset[str]
    ) -> ReconcileResult:
        """Make ``on_disk`` the baseline and recompute the effective rules (lock held)."""
        before = set(self._snapshot.texts)
        self._disk = on_disk
        present = set(on_disk)
        for text in [p for p in self._pending if p in present]:
            del self._pending[text]  # on disk now: part of the baseline
        self._revoking -= written_revocations
        self._publish()
        after = set(self._snapshot.texts)
        return ReconcileResult(frozenset(after - before), frozenset(before - after))

    def _publish(self) -> None:
        """Swap in a new snapshot of the effective rules (lock held)."""
        self._snapshot = self._build_snapshot()
        if self._snapshot.grants:
            self.endings.grants_changed(grant for _, grant in self._snapshot.grants)

    def _build_snapshot(self) -> Snapshot:
        revoking = self._revoking
        texts = dict.fromkeys(
            t for t in self._disk if not revoking or entry_rule(t).strip() not in revoking
        )
        texts.update(self._pending)
        parsed = self._parsed
        if len(parsed) > 2 * len(texts) + 64:  # forget rules no longer in use
            parsed = self._parsed = {t: parsed[t] for t in texts if t in parsed}
        rules: list[Rule] = []
        invalid: list[InvalidRule] = []
        grants: list[tuple[Rule, GrantText]] = []
        for text in texts:
            if text not in parsed:
                parsed[text] = self._parse_on_disk(text)
            rule = parsed[text]
            if isinstance(rule, InvalidRule):
                invalid.append(rule)
            elif isinstance(text, GrantText):
                grants.append((rule, text))
            else:
                rules.append(rule)
        every = tuple(rules) + tuple(r for r, _ in grants)
        return Snapshot(tuple(texts), every, tuple(invalid), tuple(grants))

    def _parse_on_disk(self, text: str) -> Rule | InvalidRule:
        try:
            return parsed_rule(entry_rule(text))
        except RuleSyntaxError as exc:
            # The operator's entry stays in the file; it just allows nothing.
            entry = InvalidRule(text, str(exc), self._line_of(text))
            log.warning(
                "%s: command_allowlist: %s; ignored (it allows nothing)",
                entry.where(self._path),
                exc,
            )
            return entry

    def _line_of(self, text: str) -> int | None:
        """The line of ``text`` in the file (an error path only: reads the file again)."""
        try:
            data = self._path.read_bytes()
            index = self._disk.index(text)
        except (OSError, ValueError):
            return None
        return line_of(data, ("command_allowlist", index))
