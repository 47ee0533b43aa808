"""The watcher's units: which watches cover the homes, and the ones whose folder was
replaced or removed (docs/configuration.md#supervisor-config-multiplexyaml ``watch``).

A watch follows a directory's inode, not its path. An operator who restores the
profiles folder from a backup (``mv profiles profiles.old && cp -a backup
profiles``, ``rm -rf profiles && tar xzf backup.tgz``) leaves the watch on the old
folder, or on none: edits to the new one were never seen, and a rule removed by
hand kept approving. So each watch remembers the identity (device, inode) of its
folder when it was made; when a folder's identity changes the watcher drops the
watch, watches the folder now at that path, and reloads every home and
``multiplex.yaml`` (everything in them may differ).

Two things notice it: the event of the folder itself appearing, leaving or being
moved, seen by its parent's watch (at once), and :class:`AnchorCheck`, which
compares the identities every second (a folder whose parent nobody watches). A
pure leaf: stdlib only.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping

__all__ = ["CREDENTIALS_DIR", "REWATCH_KEY", "AnchorCheck", "Unit", "identity", "plan"]

logger = logging.getLogger("multiplex.watcher")

# docs/security.md#credentials-checked-when-used: an edit under it reloads the known secrets.
CREDENTIALS_DIR = "credentials"
# What the debouncer is poked with to re-anchor (no profile name holds a NUL).
REWATCH_KEY = "\0rewatch"
_INTERVAL_S = 1.0


# A unit of watching: (directory, recursive).
Unit = tuple[str, bool]


def plan(homes: Mapping[str, str]) -> set[Unit]:
    """The watches that cover every home in ``homes`` (name -> absolute resolved dir)."""
    by_parent: dict[str, set[str]] = {}
    for home in homes.values():
        by_parent.setdefault(os.path.dirname(home), set()).add(home)
    units: set[Unit] = set()
    for parent, members in by_parent.items():
        only = next(iter(members)) if len(members) == 1 else None
        if only is not None and os.path.isdir(only):
            units.add((only, False))
            # A lone home's watch is not recursive: its credentials get their own.
            credentials = os.path.join(only, CREDENTIALS_DIR)
            if os.path.isdir(credentials):
                units.add((credentials, True))
        else:
            # Shared directory, or a home that does not exist yet: its parent sees it appear.
            units.add((parent, True))
    return units


def identity(path: str) -> tuple[int, int] | None:
    """The folder at ``path`` (device, inode), or None when none is there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class AnchorCheck:
    """A thread that asks ``moved()`` every second and calls ``rewatch()`` when it says so."""

    def __init__(self, moved: Callable[[], bool], rewatch: Callable[[], None]) -> None:
        self._moved = moved
        self._rewatch = rewatch
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="multiplex-watch-anchors", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.wait(_INTERVAL_S):
            try:
                if self._moved():
                    self._rewatch()
            except Exception:  # a check that fails is tried again next second
                logger.exception("config watcher: checking the watched folders failed")
