"""/etc as a sandbox shows it: a copy of its public entries, used only while in step
(docs/execution.md#etc-in-the-sandbox).

bubblewrap 0.8 reads the whole of ``/proc/self/mountinfo`` back after every
bind, so a blank bound over each of /etc's secrets (about twenty on a Debian
host) cost about 1 ms of a 5 ms sandbox (docs/operations.md#capacity). A
process that runs sandboxed commands keeps instead one copy of /etc's public
entries (files readable by all, links, folders searchable by all; never the
fixed list of secrets of ``_root_view``) in a folder of its own on a tmpfs, and
each sandbox binds it read-only at ``/etc``: one mount.

The copy is used only while it is in step with /etc. Every folder of /etc that
is copied is watched (inotify, the watch made before the folder is read), and
the watch's descriptor is polled in the caller's thread each time a sandbox's
arguments are made: a change made before that moment is always seen. A thread
that lives only while it works brings the copy back in step, in place (a file
written aside and renamed over its copy), so a sandbox running meanwhile sees
/etc's changes as a bind of /etc would show them. Until it is in step (being
made, being brought in step, past its bounds, or after an error such as a
full tmpfs) a sandbox binds the live /etc with a blank over each secret
(``_root_view.etc_blanked``).

Raw inotify through ctypes, not watchdog: watchdog reports from its own thread,
so a change just made could still be on its way when a sandbox is made; a
descriptor polled by the thread that makes the sandbox cannot be.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from multiplex.execution.sandbox._etc_sync import DIR, GONE, Stopped, Sync, TooBig, Watch, empty
from multiplex.execution.sandbox._root_view import etc_blanked
from multiplex.execution.sandbox._tmpfs import sweep_left_behind, tmpfs_root

__all__ = ["EtcMirror", "etc_binds", "etc_mirror", "hide_copy"]

log = logging.getLogger(__name__)

_SETTLE = 0.05  # seconds without a change before a copy is brought in step
_SETTLE_MAX = 1.0  # ... at most (a folder written without pause still gets a copy)
_RETRY = 10.0  # seconds after an error before the copy is tried again


class EtcMirror:
    """A copy of the public entries of ``source`` under ``root``, used only while in step."""

    def __init__(self, source: str = "/etc", root: str | None = None) -> None:
        self.source = source
        self._root = root
        self._lock = threading.Lock()
        self._watch: Watch | None = None
        self._folder: str | None = None  # the private 0700 folder holding the copy
        self._copy: str | None = None  # the copy itself: the bind's source
        self._in_step = False
        self._worker: threading.Thread | None = None
        self._retry_at = 0.0  # after an error: not tried again before this (monotonic)
        self._given_up = False  # past the bounds: never copied
        self._owner = os.getpid()
        self._asked = 0  # sandboxes made while the copy was not in step
        self._stopping = threading.Event()
        self._warned = False

    @property
    def copy(self) -> str | None:
        """The folder a sandbox binds at /etc (made or not yet in step)."""
        return self._copy

    def bind(self) -> tuple[str, ...] | None:
        """``--ro-bind COPY /etc`` while the copy is in step; else None, and it is brought in step."""
        watch = self._watch
        if self._in_step and watch is not None and not watch.pending():
            return ("--ro-bind", self._copy, "/etc")  # type: ignore[return-value]
        self._asked += 1
        if self._asked > 1:  # a process that runs one sandbox (multiplex exec) copies nothing
            self._start()
        return None

    def wait_in_step(self, timeout: float) -> bool:
        """Whether the copy is in step within ``timeout`` seconds (for tests and benches)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.bind() is not None:
                return True
            time.sleep(0.01)
        return False

    def _start(self) -> None:
        with self._lock:
            if self._given_up or os.getpid() != self._owner:
                return
            if self._worker is not None or time.monotonic() < self._retry_at:
                return
            self._in_step = False
            worker = threading.Thread(target=self._work, name="etc-mirror", daemon=True)
            self._worker = worker
        worker.start()

    def _work(self) -> None:
        try:
            while True:
                self._prepare()
                watch = self._watch
                assert watch is not None and self._copy is not None
                watch.drain()
                settle_until = time.monotonic() + _SETTLE_MAX
                while watch.pending(int(_SETTLE * 1000)) and time.monotonic() < settle_until:
                    watch.drain()
                aside = os.open(os.path.join(self._folder, "aside"), DIR)  # type: ignore[arg-type]
                try:
                    empty(aside)  # what a pass that failed left there
                    Sync(watch, aside, self._stopping).folder(self.source, self._copy)
                finally:
                    os.close(aside)
                with self._lock:
                    if not watch.pending():
                        self._in_step, self._worker, self._warned = True, None, False
                        return
                # Changed while it was copied: again.
        except Stopped:
            return
        except TooBig as exc:
            log.warning("/etc is not copied for sandboxes (%s): they bind it with blanks", exc)
            with self._lock:
                self._given_up, self._worker = True, None
        except OSError as exc:
            if self._stopping.is_set():
                return  # the process is ending: its copy is being removed
            # Once until it is in step again, not at every try.
            (log.debug if self._warned else log.warning)(
                "the copy of /etc for sandboxes could not be brought in step (%s): they bind "
                "/etc with blanks over its secrets; tried again every %gs",
                exc,
                _RETRY,
            )
            self._warned = True
            with self._lock:
                self._retry_at, self._worker = time.monotonic() + _RETRY, None

    def _prepare(self) -> None:
        if self._watch is None:
            self._watch = Watch()
        if self._folder is None or not os.path.isdir(self._copy or ""):
            if self._folder is not None:
                _remove(self._folder, self._owner)
            # Private (0700): the copy, and beside it where files are written before
            # they are renamed into it. Its own watch reports the copy removed.
            sweep_left_behind(self._root)
            prefix = f"multiplex-etc-{os.getpid()}-"
            self._folder = tempfile.mkdtemp(prefix=prefix, dir=self._root)
            atexit.register(self._at_exit, self._folder)
            self._copy = os.path.join(self._folder, "etc")
            os.mkdir(self._copy, 0o700)
            os.mkdir(os.path.join(self._folder, "aside"), 0o700)
            self._watch.add(self._folder, GONE)

    def close(self) -> None:
        """Stop using the copy and remove it (the process's own copy goes at exit)."""
        self._stop()
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._folder is not None:
            _remove(self._folder, self._owner)

    def _stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._given_up, self._in_step = True, False
            worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(5)

    def _at_exit(self, folder: str) -> None:
        if os.getpid() == self._owner:  # never a forked child's doing
            self._stop()
            _remove(folder, self._owner)


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # never a forked child's doing
        shutil.rmtree(folder, ignore_errors=True)


_MIRROR: EtcMirror | None = None
_MIRROR_LOCK = threading.Lock()


def etc_mirror() -> EtcMirror:
    """This process's copy of /etc (made, not yet in step, at the first call)."""
    global _MIRROR
    if _MIRROR is None:
        with _MIRROR_LOCK:
            if _MIRROR is None:
                _MIRROR = EtcMirror("/etc", tmpfs_root())
    return _MIRROR


def _forget_in_child() -> None:
    global _MIRROR
    _MIRROR = None  # a forked child makes its own, if it ever runs a sandbox


os.register_at_fork(after_in_child=_forget_in_child)


def etc_binds() -> tuple[str, ...]:
    """bwrap arguments showing /etc: its copy while in step, else the live one with blanks."""
    if not os.path.isdir("/etc"):
        return ()
    bind = etc_mirror().bind()
    return bind if bind is not None else etc_blanked()


def hide_copy(binds: Sequence[str], shown: Iterable[Path]) -> list[str]:
    """A tmpfs over the private folder of the copy ``binds`` show, if a folder in
    ``shown`` (bound from the host: writable or read-only) holds it; else nothing.

    An operator may show ``/dev/shm`` or the runtime folder: the copy must not be
    reached, let alone written, but at ``/etc``, read-only.
    """
    if len(binds) != 3 or binds[2] != "/etc" or binds[0] != "--ro-bind":
        return []
    return list(_hides_copy(binds[1], tuple(shown)))


@functools.lru_cache(maxsize=1024)
def _hides_copy(copy: str, shown: tuple[Path, ...]) -> tuple[str, ...]:
    """``hide_copy``'s answer, kept: the same copy and the same kept view each command."""
    folder = Path(copy).parent
    if any(folder == p or folder.is_relative_to(p) for p in shown):
        return ("--tmpfs", str(folder))
    return ()
