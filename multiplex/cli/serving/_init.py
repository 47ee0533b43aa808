"""``multiplex up`` as a container's PID 1: a minimal init in front of the gateway (docs/operations.md#a-container).

bubblewrap's outer process may exit before the sandbox's own PID 1 has been
reaped; that orphan is re-parented to the PID namespace's init. systemd or a
container runtime's ``--init`` reaps it; a gateway that is itself PID 1 would
not, and every sandboxed command would leave a zombie until the container's
pid limit refuses new processes. So a PID-1 ``up`` forks before anything else
starts: the child serves, the parent reaps every process that ends, passes
the signals an operator sends on to the child, and leaves with its status.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from types import FrameType

__all__ = ["FORWARDED", "init_if_pid1"]

log = logging.getLogger("multiplex.gateway")
FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def init_if_pid1() -> None:
    """Return in the process that serves; as PID 1, never return in the reaping parent."""
    if os.getpid() != 1:
        return
    if threading.active_count() > 1:  # a fork now could copy a held lock: only warn
        log.warning("multiplex runs as PID 1: run it under an init (--init) to reap orphans")
        return
    child = os.fork()
    if child == 0:
        # A group of its own: a terminal's Ctrl-C reaches it once, forwarded (twice
        # would be uvicorn's "force exit" instead of a graceful stop).
        os.setpgid(0, 0)
        return

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    while True:
        try:
            pid, status = os.wait()  # every orphan that ends, and finally the gateway
        except ChildProcessError:
            os._exit(1)  # the gateway is gone without its status: nothing left to serve
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)
