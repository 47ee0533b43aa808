"""The config watcher: tells the supervisor when a home's config.yaml or .env may have changed.

docs/design.md and docs/allowlist.md: operators edit ``config.yaml`` by hand while the process runs, and
a revocation takes effect at once; docs/configuration.md#supervisor-config-multiplexyaml ``watch: {mode, debounce_ms}``; docs/gateway.md
``/readyz`` reports ``ConfigWatcher.alive``.

How homes are watched (one observer, one inotify instance, few watches):

* Homes are grouped by the directory that holds them (normally ``profiles_dir``).
  A directory holding two or more watched homes gets ONE recursive watch; a home
  alone in its directory (standalone mode, an extra home elsewhere) gets a
  non-recursive watch on the home itself, so one home never costs a recursive
  watch over its unrelated siblings (e.g. ``~`` for ``~/agent``).
* Directories are watched, never the files, so atomic saves (vim's rename dance,
  ``sed -i``, write-temp-then-``mv``) and delete-then-recreate are all seen;
  events are then filtered to ``<home>/config.yaml``, ``<home>/.env`` and the home
  directory itself (created, moved in, deleted).
* watchdog >= 7 shares one inotify instance per ``InotifyObserver``; each watch
  is one emitter thread. 1000 homes under one ``profiles_dir`` = one instance,
  one emitter, and (``_inotify.HomesObserver``) one inotify watch per home and
  per directory of its ``credentials/``: a home's ``logs/`` and working trees
  are not watched, so the lines the supervisor appends there wake nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Literal, get_args

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
)
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from multiplex._errors import ConfigError
from multiplex.profiles._settled import being_written
from multiplex.watching._debounce import Debouncer
from multiplex.watching._router import SUPERVISOR_KEY, Router
from multiplex.watching._units import REWATCH_KEY, AnchorCheck, Unit, identity, plan

__all__ = ["ConfigWatcher", "WatchMode"]

logger = logging.getLogger("multiplex.watcher")

WatchMode = Literal["auto", "inotify", "polling", "off"]

# How soon a reload that found a file being written tries again.
_AGAIN_S = 0.2

# Only events that can mean "content changed"; opens, reads and closes without a
# write stay in the kernel (the supervisor's own reload reads these files).
_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileMovedEvent,
    FileDeletedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirMovedEvent,
    DirDeletedEvent,
]


class ConfigWatcher:
    """One watchdog observer for every profile home; calls back, debounced, when a
    home's config.yaml or .env may have changed.

    Promises: ``on_change(name)`` runs on one dispatcher thread (never the observer
    thread), once per burst of changes to that home, after the burst has been quiet
    for ``debounce_ms``; homes are independent. A callback that raises is counted
    (``errors``, ``last_error``), logged once per distinct message, and never stops
    later deliveries. After ``unwatch(name)`` returns, no callback for ``name`` runs;
    after ``stop()`` returns, no callback runs and no thread of the watcher is left.

    ``mode="off"`` schedules nothing and never calls back; ``alive`` is then True
    between ``start()`` and ``stop()`` (idle by the operator's choice is ready, not
    dead: ``/readyz`` must not fail for a deliberate setting). ``alive`` is False if
    any watch has ended, e.g. a lone home's directory was deleted (its own watch
    ends with it) until that home is unwatched. A home whose directory and parent
    are both missing cannot be watched: that counts in ``errors``/``last_error``.
    ``mode="inotify"`` raises ``ConfigError`` from ``start()`` if inotify cannot
    be had; ``"auto"`` falls back to polling and says so in ``mode``.
    """

    def __init__(
        self,
        on_change: Callable[[str], None],
        *,
        mode: WatchMode = "auto",
        debounce_ms: int = 50,
        poll_interval: float = 0.25,
    ) -> None:
        if mode not in get_args(WatchMode):
            raise ConfigError(
                f"unknown watch mode {mode!r} (auto | inotify | polling | off)", key="watch.mode"
            )
        if debounce_ms < 0:
            raise ConfigError(f"must be >= 0, got {debounce_ms}", key="watch.debounce_ms")
        self._requested: WatchMode = mode
        self._mode: str = _resolve(mode)
        self._poll_interval = poll_interval
        self._on_change = on_change
        self._debouncer = Debouncer(self._deliver, debounce=debounce_ms / 1000)
        self._router = Router(self._debouncer)
        self._lock = threading.RLock()
        self._homes: dict[str, str] = {}
        self._observer: BaseObserver | None = None
        self._scheduled: dict[Unit, ObservedWatch] = {}
        self._anchored: dict[Unit, tuple[int, int] | None] = {}  # each watch's folder, as made
        self._unwatched: set[Unit] = set()  # wanted, not watched: no folder there (yet)
        self._anchors = AnchorCheck(self._moved, lambda: self._debouncer.poke(REWATCH_KEY))
        self._started = False
        self._stopped = False

    def again(self, name: str) -> None:
        """Call back for ``name`` again shortly: its reload found a file still being
        written (docs/configuration.md#validation). Polling sees no close, and a file
        found in a folder that appeared before its watch may make no close event."""
        if self._mode != "off":
            self._debouncer.later(name, _AGAIN_S)

    def set_debounce(self, debounce_ms: int) -> None:
        """Apply a new ``watch.debounce_ms`` to bursts armed from now on (a live reload)."""
        self._debouncer.debounce = debounce_ms / 1000

    # -- what the gateway shows --------------------------------------------------

    @property
    def alive(self) -> bool:
        """True while the observer, its emitters and the dispatcher threads run
        (mode "off": True between start() and stop())."""
        with self._lock:
            if not self._started or self._stopped:
                return False
            if self._mode == "off":
                return True
            observer = self._observer
            return (
                observer is not None
                and observer.is_alive()
                and all(emitter.is_alive() for emitter in observer.emitters)
                and self._debouncer.alive
            )

    def being_written(self, path: str | Path) -> bool:
        """Whether ``path`` is open for writing: the kernel's answer
        (profiles._settled), else whether inotify saw it written and not closed. A
        reload that finds a new home leaves it until its ``config.yaml`` is whole."""
        known = being_written(path)
        if known is not None:
            return known
        return self._router.being_written(os.path.abspath(os.fspath(path)))

    @property
    def mode(self) -> str:
        """The mode in effect: "inotify", "polling" or "off" ("auto" resolved)."""
        return self._mode

    @property
    def last_error(self) -> str | None:
        """The last callback or scheduling error, one line."""
        return self._debouncer.last_error

    @property
    def errors(self) -> int:
        """How many callbacks (or schedulings) have failed."""
        return self._debouncer.errors

    # -- control -----------------------------------------------------------------

    def watch(self, name: str, home: Path) -> None:
        """Watch ``home`` for profile ``name`` (before or after start(); re-watching moves it)."""
        # Resolved: a symlinked home is watched where its files really change.
        resolved = str(Path(home).expanduser().resolve())
        with self._lock:
            if self._stopped:
                return
            self._homes[name] = resolved
            self._publish()
            self._reconcile()

    def watch_many(self, homes: dict[str, Path]) -> None:
        """:meth:`watch` for many profiles at once: one plan for the whole fleet.

        Watching 10,000 homes one by one re-plans the watches each time
        (quadratic); this resolves every home, then plans once.
        """
        resolved = {name: str(Path(home).expanduser().resolve()) for name, home in homes.items()}
        with self._lock:
            if self._stopped:
                return
            self._homes.update(resolved)
            self._publish()
            self._reconcile()

    def watch_supervisor(self, config_file: Path, profiles_dir: Path | None) -> None:
        """Also call ``on_change(SUPERVISOR_KEY)`` when ``config_file`` (multiplex.yaml)
        changes, or a home appears in or goes from ``profiles_dir`` (None: a fixed list)."""
        config = str(Path(config_file).expanduser().resolve())
        folder = None if profiles_dir is None else str(Path(profiles_dir).expanduser().resolve())
        with self._lock:
            if self._stopped:
                return
            self._router.supervisor = (config, folder)
            self._reconcile()

    def unwatch(self, name: str) -> None:
        """Stop watching ``name``; no callback for it runs after this returns."""
        with self._lock:
            if self._homes.pop(name, None) is None:
                return
            self._publish()
            self._reconcile()
        self._debouncer.cancel(name)

    def start(self) -> None:
        """Start the observer and the dispatcher (once; a stopped watcher stays stopped)."""
        with self._lock:
            if self._started or self._stopped:
                return
            self._started = True
            if self._mode == "off":
                logger.info("config watcher off: edits are picked up only on restart")
                return
            self._debouncer.start()
            self._observer = self._new_observer()
            self._observer.start()
            self._reconcile()
            self._anchors.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop and join every thread of the watcher; idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            observer, self._observer = self._observer, None
            self._scheduled.clear()
        self._anchors.stop(timeout)
        if observer is not None:
            observer.stop()
            if observer is not threading.current_thread():
                observer.join(timeout)
            if observer.is_alive():
                logger.warning("config watcher: observer did not stop within %.1fs", timeout)
        if not self._debouncer.stop(timeout):
            logger.warning("config watcher: a callback still runs %.1fs after stop", timeout)

    # -- internals ---------------------------------------------------------------

    def _deliver(self, name: str) -> None:
        # An event read before unwatch() published the new map may still poke a
        # dropped name; the dispatcher holds its delivery lock here, so this check
        # and unwatch()'s cancel() cannot interleave badly.
        if name == REWATCH_KEY:
            self._rewatch()
        elif name in self._homes or (name == SUPERVISOR_KEY and self._router.supervisor):
            self._on_change(name)

    def _moved(self) -> bool:
        """Whether a watch follows a folder no longer at its path (moved away, or removed:
        its watch then ends), or a folder that could not be watched is there now."""
        with self._lock:
            if self._observer is None:
                return False
            return bool(self._stale()) or any(os.path.isdir(p) for p, _ in self._unwatched)

    def _stale(self) -> list[Unit]:
        # (An inode number is reused at once by a folder made anew: a removed folder's
        # watch is told by its end, a moved one's by the identity at its path.)
        observer = self._observer
        ended = {e.watch for e in observer.emitters if not e.is_alive()} if observer else set()
        return [
            unit
            for unit, made in self._anchored.items()
            if self._scheduled.get(unit) in ended or identity(unit[0]) != made
        ]

    def _rewatch(self) -> None:
        """Drop the watches whose folder was replaced or removed, watch what is there now,
        and reload every home and multiplex.yaml (their files may all be new)."""
        with self._lock:
            observer = self._observer
            if observer is None:
                return
            for unit in self._stale():
                del self._anchored[unit]
                with contextlib.suppress(KeyError, OSError):
                    observer.unschedule(self._scheduled.pop(unit))
            self._reconcile()
            names = [*self._homes, *([SUPERVISOR_KEY] if self._router.supervisor else [])]
        logger.info("config watcher: a watched folder was replaced or removed; watching anew")
        for name in names:
            self._debouncer.poke(name)

    def _publish(self) -> None:
        names_by_home: dict[str, set[str]] = {}
        for name, home in self._homes.items():
            names_by_home.setdefault(home, set()).add(name)
        self._router.names_by_home = {h: frozenset(n) for h, n in names_by_home.items()}

    def _new_observer(self) -> BaseObserver:
        if self._mode == "inotify":
            try:
                from multiplex.watching._inotify import HomesObserver

                # A directory tree created fast inside a recursively watched directory
                # (``mkdir -p``, a cache's makedirs) makes watchdog re-add a watch it just
                # added and warn once per new directory; the watch is right either way.
                warnings.filterwarnings(
                    "ignore",
                    message=r"Callback with id .* already exists",
                    category=RuntimeWarning,
                    module=r"watchdog\.observers\.inotify",
                )
                observer = HomesObserver()
                self._router.waits_for_close = True
                return observer
            except (ImportError, OSError) as exc:
                if self._requested == "inotify":
                    raise ConfigError(f"inotify unavailable: {exc}", key="watch.mode") from exc
                # "auto": e.g. fs.inotify.max_user_instances reached; polling still works.
                logger.warning("config watcher: inotify unavailable (%s); polling instead", exc)
                self._mode = "polling"
        self._router.waits_for_close = False  # polling sees no close: each change counts
        return PollingObserver(timeout=self._poll_interval)

    def _reconcile(self) -> None:
        """Bring the observer's watches in line with the homes (caller holds _lock)."""
        observer = self._observer
        if observer is None:
            return  # not started (or "off"): start() reconciles
        wanted = self._wanted()
        # New watches first, old ones after: an overlap, never a gap in coverage.
        for unit in sorted(wanted - self._scheduled.keys()):
            path, recursive = unit
            made = identity(path)
            try:
                self._scheduled[unit] = observer.schedule(
                    self._router, path, recursive=recursive, event_filter=_EVENT_FILTER
                )
            except OSError as exc:
                self._debouncer.record_error(f"cannot watch {path}: {exc.strerror or exc}")
                continue
            self._anchored[unit] = made
        for unit in self._scheduled.keys() - wanted:
            self._anchored.pop(unit, None)
            observer.unschedule(self._scheduled.pop(unit))
        self._router.roots = frozenset(path for path, _ in self._scheduled)
        followed = self._router.supervisor
        folder = followed[1] if followed is not None else None
        self._unwatched = wanted - self._scheduled.keys() | (
            {(folder, True)} if folder is not None and (folder, True) not in wanted else set()
        )

    def _wanted(self) -> set[Unit]:
        wanted = plan(self._homes)
        if (followed := self._router.supervisor) is not None:
            config, folder = followed
            wanted.add((os.path.dirname(config), False))
            if folder is not None and os.path.isdir(folder):
                wanted.add((folder, True))
        return wanted


def _resolve(mode: WatchMode) -> str:
    """``auto`` -> inotify where the platform has it, else polling."""
    if mode != "auto":
        return mode
    try:
        import watchdog.observers.inotify  # noqa: F401  (Linux only)
    except ImportError:
        return "polling"
    return "inotify"
