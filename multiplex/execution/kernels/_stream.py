"""The session kernel's stdout and stderr (docs/kernels.md#speed, #output).

Runs inside a session kernel, loaded by path beside ``_engine.py``.
"""

from __future__ import annotations

import array
import codecs
import fcntl
import os
import select
import sys
import termios
import threading
import time

from ipykernel.iostream import OutStream

__all__ = ["DRAIN_WAIT", "CellStream"]

# Longest a flush waits for the fd watcher to take what is already in the pipe:
# a subprocess left writing without pause cannot hold a cell open.
DRAIN_WAIT = 0.05
_CHUNK = 65536


class CellStream(OutStream):
    """The kernel's stdout/stderr: a flush that never waits for the IOPub thread."""

    _relaying = False  # the fd watcher holds bytes it read and has not buffered yet

    def _watch_pipe_fd(self) -> None:
        # ipykernel's watcher, with a mark set BEFORE bytes leave the pipe and
        # cleared once they are in the buffer: a flush sees them either way.
        fid = self._fid
        if fid is None:
            return
        poller = select.poll()
        poller.register(fid, select.POLLIN)
        # A character split across two reads of what is already in the pipe is
        # decoded whole; an unfinished one when the pipe is empty is replaced.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while self._should_watch:
                poller.poll()
                self._relaying = True
                data = os.read(fid, _CHUNK)
                if not data or not self._should_watch:
                    break  # closed (close() wakes the watcher with one byte)
                text = decoder.decode(data, final=self._unread(fid) == 0)
                if text:
                    self.write(text)
                os.write(self._original_stdstream_copy, data)
                self._relaying = False
        except Exception:
            self._exc = sys.exc_info()
        finally:
            self._relaying = False

    def _pipe_pending(self) -> bool:
        fid = self._fid
        if fid is None or not self._should_watch:
            return False
        return self._relaying or self._unread(fid) > 0

    @staticmethod
    def _unread(fid: int) -> int:
        size = array.array("i", [0])
        try:
            fcntl.ioctl(fid, termios.FIONREAD, size)
        except OSError:
            return 0
        return size[0]

    def flush(self) -> None:
        pub = self.pub_thread
        thread = pub.thread if pub is not None else None
        if thread is None or not thread.is_alive() or thread.ident == threading.get_ident():
            super().flush()  # type: ignore[no-untyped-call]
            return
        if self._pipe_pending():
            deadline = time.monotonic() + DRAIN_WAIT
            while self._pipe_pending() and time.monotonic() < deadline:
                time.sleep(0.0002)
        with self._buffer_lock:
            pending = bool(self._buffers)
        if pending:
            # The stream messages are queued for the IOPub thread here, so they
            # go out ahead of the cell's idle status, queued after them.
            self._flush()

    def _flush(self) -> None:
        # Taking the buffer and queueing its message happen in one step, so two
        # flushes (this thread's, the IOPub thread's timer) keep the output in order.
        # The IOPub thread never waits for that step: the thread holding the lock
        # may itself wait for the IOPub thread to drain a full event pipe (a cell
        # that flushes thousands of times), so the timer tries again later.
        pub = self.pub_thread
        thread = pub.thread if pub is not None else None
        on_iopub = thread is not None and thread.ident == threading.get_ident()
        if not self._buffer_lock.acquire(blocking=not on_iopub):
            self._io_loop.call_later(self.flush_interval, self._flush)
            return
        try:
            super()._flush()  # type: ignore[no-untyped-call]
        finally:
            self._buffer_lock.release()
