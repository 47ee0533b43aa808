"""A command's stdout and stderr, drained by the thread that waits for it (docs/execution.md#the-result).

No thread per stream: the run's own thread polls both pipes and the process's
exit together (``pump``), keeping the first ``OUTPUT_CAP`` bytes of each
stream and handing them on as they arrive; past the cap it keeps reading so
the command never blocks on a full pipe.
"""

from __future__ import annotations

import math
import os
import select
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["OUTPUT_CAP", "Captured", "OnOutput", "Pipe", "Stream", "pump"]

OUTPUT_CAP = 1024 * 1024  # bytes per stream (docs/execution.md)

# Called with ("stdout" | "stderr", bytes) as output arrives (only what the cap
# keeps), and once with b"" at the stream's end.
OnOutput = Callable[[str, bytes], None]

_POLL_FALLBACK = 0.05  # seconds between exit checks when there is no fd to wait on


class Stream(Protocol):
    """What ``Captured`` reads: a pipe's fd, and closing it."""

    def fileno(self) -> int: ...

    def close(self) -> None: ...


class Pipe:
    """A pipe's read end as a ``Stream``, without the file object ``open`` builds (and its
    three system calls) for a pipe read only through its fd."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


class Captured:
    """One output pipe: the first ``OUTPUT_CAP`` bytes, and whether more came."""

    def __init__(self, stream: Stream, name: str, on_output: OnOutput | None) -> None:
        self.data = bytearray()
        self.truncated = False
        self.open = True
        self._stream, self._name, self._on_output = stream, name, on_output
        self.fd = stream.fileno()

    def read(self) -> None:
        """Take what the pipe holds now (it is readable); at its end, close it."""
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return
        room = OUTPUT_CAP - len(self.data)
        if room > 0:
            self.data += chunk[:room]
            if self._on_output is not None:
                self._on_output(self._name, bytes(chunk[:room]))
        if len(chunk) > room:
            self.truncated = True

    def close(self) -> None:
        """The stream ends here (its end, or given up on): closed, told once."""
        if not self.open:
            return
        self.open = False
        self._stream.close()
        if self._on_output is not None:
            self._on_output(self._name, b"")

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def pump(
    streams: tuple[Captured, ...],
    *,
    exit_fd: int | None,
    exited: Callable[[], bool],
    deadline: float,
    until_exit: bool,
) -> bool:
    """Drain ``streams`` until the process exits (``until_exit``) or they all end; or ``deadline``.

    ``exit_fd`` becomes readable when the process exits (a pidfd, the
    sub-reaper's connection); without one ``exited()`` is asked every 50 ms.
    True when what was waited for happened before ``deadline`` (monotonic).
    """
    poller = select.poll()
    by_fd = {s.fd: s for s in streams if s.open}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    gone = exited() if exit_fd is None else False
    if exit_fd is not None and until_exit:
        poller.register(exit_fd, select.POLLIN)
    while True:
        if until_exit and gone:
            return True
        if not until_exit and not by_fd:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if exit_fd is None and until_exit:
            left = min(left, _POLL_FALLBACK)
        for fd, _event in poller.poll(None if math.isinf(left) else math.ceil(left * 1000)):
            if fd == exit_fd:
                gone = True
                poller.unregister(fd)
                continue
            stream = by_fd[fd]
            stream.read()
            if not stream.open:
                poller.unregister(fd)
                del by_fd[fd]
        if exit_fd is None and until_exit and not gone:
            gone = exited()
