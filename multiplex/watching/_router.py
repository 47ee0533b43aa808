"""Which watched names an event concerns (docs/configuration.md#supervisor-config-multiplexyaml ``watch``).

:class:`Router` runs on the observer thread: it maps each file event to the
homes it may have changed (a home's ``config.yaml`` or ``.env``, anything under
its ``credentials/``) and to :data:`SUPERVISOR_KEY` when ``multiplex.yaml`` or
the set of homes in the profiles folder may have changed, and pokes the
debouncer for each. It never reads a file but to check that a leaving
``config.yaml`` is really gone. With inotify, a file written in place counts as
changed when its writer closes it, or when the kernel says no writer has it open
(a hard link makes no close); the reload itself reads only a file no writer has
open (docs/configuration.md#validation).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from multiplex.profiles._settled import being_written
from multiplex.watching._debounce import Debouncer
from multiplex.watching._units import CREDENTIALS_DIR, REWATCH_KEY

__all__ = ["SUPERVISOR_KEY", "WATCHED_FILES", "Router"]

# docs/configuration.md#profile-home: the two files of a home that a reload reads.
WATCHED_FILES: frozenset[str] = frozenset({"config.yaml", ".env"})

# The name ``on_change`` gets for multiplex.yaml or the profiles folder (no profile
# name contains a NUL: names are directory names).
SUPERVISOR_KEY = "\0multiplex.yaml"


# What a writer does to a file before it closes it (IN_CREATE, IN_MODIFY).
_WRITING = frozenset({"created", "modified"})
# How long a file written and not closed is taken as still being written.
_WRITER_WAIT_S = 30.0


def _credentials_owner(
    names_by_home: Mapping[str, frozenset[str]], path: str
) -> frozenset[str] | None:
    """The names of the home whose ``credentials/`` folder holds ``path``, if any."""
    head, tail = os.path.split(path)
    while head and tail:
        if tail == CREDENTIALS_DIR and head in names_by_home:
            return names_by_home[head]
        head, tail = os.path.split(head)
    return None


class Router(FileSystemEventHandler):
    """Runs on the observer thread: maps an event to watched names and pokes them."""

    def __init__(self, debouncer: Debouncer) -> None:
        self._debouncer = debouncer
        # home dir -> names; replaced whole (never mutated) so the observer thread
        # reads it without taking the watcher's lock.
        self.names_by_home: dict[str, frozenset[str]] = {}
        # (multiplex.yaml, profiles folder) followed for SUPERVISOR_KEY, or None.
        self.supervisor: tuple[str, str | None] | None = None
        # inotify reports a writer closing a file (polling does not): a file written in
        # place is then read once its writer closes it, never half written.
        self.waits_for_close = False
        # path -> when its writer started: files opened for writing and not yet closed.
        self.writing: dict[str, float] = {}
        # The folders watched: one of them appearing, leaving or moved is a re-anchor.
        self.roots: frozenset[str] = frozenset()

    def being_written(self, path: str) -> bool:
        """Whether a writer has ``path`` open (written, not closed) since less than a while
        ago; a file left so longer (a hard link makes no close) counts as whole."""
        started = self.writing.get(path)
        return started is not None and time.monotonic() - started < _WRITER_WAIT_S

    def _whole_now(self, path: str, names_by_home: Mapping[str, frozenset[str]]) -> bool:
        """Whether the kernel says no process has this watched file open for writing: a
        hard link or a chmod makes no close event (profiles._settled)."""
        followed = self.supervisor
        watched = (
            (followed is not None and path == followed[0])
            or os.path.basename(path) in WATCHED_FILES
            or _credentials_owner(names_by_home, path) is not None
        )
        return watched and being_written(path) is False

    def _supervisor_event(
        self, path: str, kind: str, names_by_home: Mapping[str, frozenset[str]]
    ) -> bool:
        """Whether this event may change what multiplex.yaml serves.

        Any event on multiplex.yaml itself; in the profiles folder only a home
        appearing or going: a directory created, deleted or moved there, or a
        ``config.yaml`` arriving in a home not served yet or leaving one. An edit
        inside a served home (even a rename over its config.yaml) is that home's
        own reload, never a rescan of the whole folder (10,000 homes).
        """
        followed = self.supervisor
        if followed is None:
            return False
        config, folder = followed
        if path == config:
            return True
        if folder is None or kind == "modified" or kind == "opened":
            return False
        parent = os.path.dirname(path)
        if parent == folder:
            return kind != "closed"
        if os.path.basename(path) != "config.yaml" or os.path.dirname(parent) != folder:
            return False
        if kind in ("created", "moved-to", "closed"):  # closed: written in place, complete
            return parent not in names_by_home
        # Leaving; a replace shows as delete-then-create in polling mode: gone only if it is.
        return not os.path.lexists(path)

    def _anchor(self, path: str) -> bool:
        """``path`` is a watched folder, or the profiles folder (``_anchors``)."""
        followed = self.supervisor
        return path in self.roots or (followed is not None and path == followed[1])

    def on_any_event(self, event: FileSystemEvent) -> None:
        names_by_home = self.names_by_home
        kind = event.event_type
        if self.waits_for_close and not event.is_directory:
            path = os.fsdecode(event.src_path)
            if kind in _WRITING and not self._whole_now(path, names_by_home):
                self.writing.setdefault(path, time.monotonic())
                return  # still being written: its writer's close is the change (fail closed)
            self.writing.pop(path, None)  # closed, deleted, moved away or whole
        for raw, side in ((event.src_path, kind), (getattr(event, "dest_path", ""), "moved-to")):
            if not raw:
                continue
            path = os.fsdecode(raw)
            if event.is_directory and side != "modified" and self._anchor(path):
                self._debouncer.poke(REWATCH_KEY)  # a watched folder replaced or removed
            if self._supervisor_event(path, side, names_by_home):
                self._debouncer.poke(SUPERVISOR_KEY)
            names = names_by_home.get(path)  # the home directory itself
            if names is None and os.path.basename(path) in WATCHED_FILES:
                names = names_by_home.get(os.path.dirname(path))
            if names is None:
                names = _credentials_owner(names_by_home, path)
            for name in names or ():
                self._debouncer.poke(name)
