"""watchdog's inotify observer, watching only the directories a reload reads from.

A recursive watch over a folder of homes would otherwise put a watch on every
directory below it: each home's ``logs/`` (every gate decision and kernel cell
appends a line there), the agents' working trees, caches. Each write in them
wakes the observer thread, which takes the GIL from the thread that wrote
(about a quarter of a millisecond a kernel cell), to read an event the router
then drops. So a recursive watch of a folder of homes covers the folder, each
directory in it (a home: its ``config.yaml`` and ``.env``) and each home's
``credentials/`` tree, and nothing else (docs/configuration.md#the-watcher).

A recursive watch whose root is itself a ``credentials`` folder (a lone home's)
watches its whole tree, as stock watchdog does.
"""

from __future__ import annotations

import os

from watchdog.observers.inotify import InotifyEmitter, InotifyObserver, InotifyWatchGroup
from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, Mask
from watchdog.observers.inotify_move_event_grouper import GroupedInotifyEvent

from multiplex.watching._units import CREDENTIALS_DIR

__all__ = ["HomesObserver", "watched_below"]

_CREDENTIALS = os.fsencode(CREDENTIALS_DIR)


def watched_below(root: bytes, path: bytes) -> bool:
    """Whether a recursive watch of the folder of homes ``root`` watches the directory ``path``."""
    if os.path.basename(root) == _CREDENTIALS:
        return True
    parts = os.path.relpath(path, root).split(os.sep.encode())
    if parts[0] == b"..":
        return False
    return len(parts) <= 1 or parts[1] == _CREDENTIALS


class _HomesWatchGroup(InotifyWatchGroup):
    def _recursive_simulate(self, src_path: bytes) -> list[InotifyEvent]:
        # A file found in a folder that appeared before its watch did is reported as
        # closed, not created: a "created" file waits for its writer's close
        # (watching._router), and this one's may have come before the watch. Whether
        # a writer still has it open, the reload asks the kernel (profiles._settled).
        return [
            InotifyEvent(e.wd, Mask(InotifyConstants.IN_CLOSE_WRITE), 0, e.name)
            if e.mask == InotifyConstants.IN_CREATE
            else e
            for e in super()._recursive_simulate(src_path)
        ]

    def _add_all_callbacks(self, path: bytes) -> None:
        # watchdog's walk, pruned to the directories a reload reads from.
        if not watched_below(self.path, path):
            return
        self._add_callback(path)
        if not self.is_recursive or not os.path.isdir(path):
            return
        for top, dirnames, _ in os.walk(path):
            keep = []
            for name in dirnames:
                full = os.path.join(top, name)
                if watched_below(self.path, full) and not os.path.islink(full):
                    keep.append(name)
                    self._add_callback(full)
            dirnames[:] = keep  # os.walk descends only into what is watched


class _HomesEmitter(InotifyEmitter):
    # Full events: a file moved in from an unwatched place is a move (its content is
    # whole), so a "created" event is only ever a file being written, which the router
    # reads once its writer closes it.
    def build_and_queue_event(
        self, event: GroupedInotifyEvent, *, full_events: bool = True
    ) -> None:
        super().build_and_queue_event(event, full_events=full_events)

    def on_thread_start(self) -> None:
        self._inotify = _HomesWatchGroup(
            self._inotify_fd,
            os.fsencode(self.watch.path),
            is_recursive=self.watch.is_recursive,
            event_mask=self.get_event_mask_from_filter(),
            follow_symlink=self.watch.follow_symlink,
        )


class HomesObserver(InotifyObserver):
    """One inotify instance for every watch, each recursive one pruned by :func:`watched_below`."""

    def __init__(self) -> None:
        super().__init__()
        self._emitter_class = _HomesEmitter
