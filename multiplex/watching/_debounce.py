"""The watcher's dispatcher: debounces "this home may have changed" and calls back.

Filesystem events arrive in bursts (an editor's save is three to six events), and
each must become at most one reload. ``Debouncer`` collects pokes per profile name
and calls ``on_change(name)`` on ONE thread of its own once that name has been
quiet for ``debounce`` seconds. The observer thread only pokes, so a slow reload
never delays event reading, and a callback that raises is counted, never fatal.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["Debouncer"]

logger = logging.getLogger("multiplex.watcher")

# A home written to without pause (a runaway script) must still reload now and then:
# a burst is delivered at the latest this long after its first event.
_MAX_HOLD_S = 1.0
# Distinct error messages remembered for "log once"; beyond it, the oldest are forgotten.
_SEEN_ERRORS_MAX = 256


class Debouncer:
    """Per-name trailing debounce with a single dispatcher thread.

    Promises: one ``on_change(name)`` per burst of ``poke(name)`` calls, issued after
    the burst has been quiet for ``debounce`` seconds (or ``_MAX_HOLD_S`` after its
    first poke, whichever comes first); names are independent; callbacks run one at
    a time, in the order they fell due, on the dispatcher thread; after ``cancel(name)``
    returns no callback for that name is running or will start (unless poked again);
    after ``stop()`` returns no callback is running or will start.
    """

    def __init__(self, on_change: Callable[[str], None], *, debounce: float) -> None:
        self._on_change = on_change
        self._debounce = max(0.0, debounce)
        self._cond = threading.Condition(threading.Lock())
        # name -> (due, first poke of the burst); guarded by _cond.
        self._pending: dict[str, tuple[float, float]] = {}
        self._stopping = False
        # The name taken off _pending and about to be delivered; cancel() clears it.
        self._picked: str | None = None
        # Held while a callback runs, so cancel()/stop() can wait for it to finish.
        # Reentrant: a callback may itself call cancel() (e.g. unwatch a removed home).
        self._delivering = threading.RLock()
        self._thread: threading.Thread | None = None
        self._errors = 0
        self._last_error: str | None = None
        self._seen_errors: dict[str, None] = {}

    # -- state -------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """True while the dispatcher thread runs."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def errors(self) -> int:
        """How many callbacks have raised."""
        return self._errors

    @property
    def last_error(self) -> str | None:
        """The last callback error, one line: ``ExceptionClass: message``."""
        return self._last_error

    def record_error(self, message: str) -> None:
        """Count an error raised outside a callback (e.g. scheduling) and log it once."""
        with self._cond:
            self._note_error(message)

    # -- control -----------------------------------------------------------------

    def start(self) -> None:
        """Start the dispatcher thread (once)."""
        with self._cond:
            if self._thread is not None or self._stopping:
                return
            self._thread = threading.Thread(
                target=self._run, name="multiplex-watcher-dispatch", daemon=True
            )
            self._thread.start()

    @property
    def debounce(self) -> float:
        """Seconds a burst must be quiet; settable while running (a live reload)."""
        return self._debounce

    @debounce.setter
    def debounce(self, seconds: float) -> None:
        with self._cond:
            self._debounce = max(0.0, seconds)

    def poke(self, name: str) -> None:
        """Note that ``name`` may have changed; (re)arm its debounce timer."""
        now = time.monotonic()
        with self._cond:
            if self._stopping:
                return
            first = self._pending[name][1] if name in self._pending else now
            self._pending[name] = (min(now + self._debounce, first + _MAX_HOLD_S), first)
            self._cond.notify()

    def later(self, name: str, seconds: float) -> None:
        """Deliver ``name`` again ``seconds`` from now (sooner if poked): a reload that
        found a file still being written tries again."""
        due = time.monotonic() + seconds
        with self._cond:
            if self._stopping:
                return
            current = self._pending.get(name)
            self._pending[name] = (
                (due, due) if current is None else (min(current[0], due), current[1])
            )
            self._cond.notify()

    def cancel(self, name: str) -> None:
        """Drop any pending callback for ``name`` and wait out one in progress."""
        with self._cond:
            self._pending.pop(name, None)
            if self._picked == name:
                self._picked = None
        with self._delivering:
            pass

    def stop(self, timeout: float) -> bool:
        """Stop delivering and join the thread; False if it outlived ``timeout``."""
        with self._cond:
            self._stopping = True
            self._pending.clear()
            self._cond.notify_all()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            # stop() from inside a callback: the thread ends when the callback returns.
            return True
        thread.join(timeout)
        return not thread.is_alive()

    # -- the dispatcher thread ---------------------------------------------------

    def _next_due(self) -> str | None:
        """Block until a name falls due (returns it) or stop is requested (None)."""
        with self._cond:
            while not self._stopping:
                if self._pending:
                    name, (due, _) = min(self._pending.items(), key=lambda item: item[1][0])
                    wait = due - time.monotonic()
                    if wait <= 0:
                        del self._pending[name]
                        self._picked = name
                        return name
                    self._cond.wait(wait)
                else:
                    self._cond.wait()
            return None

    def _run(self) -> None:
        while (name := self._next_due()) is not None:
            with self._delivering:
                with self._cond:
                    # Re-checked under the delivery lock: stop() or cancel() may have
                    # run between picking the name and getting here.
                    if self._stopping:
                        return
                    if self._picked != name:
                        continue
                    self._picked = None
                try:
                    self._on_change(name)
                except Exception as exc:
                    with self._cond:
                        self._note_error(_one_line(exc))

    def _note_error(self, message: str) -> None:
        # Caller holds _cond.
        self._errors += 1
        self._last_error = message
        if message not in self._seen_errors:
            self._seen_errors[message] = None
            if len(self._seen_errors) > _SEEN_ERRORS_MAX:
                del self._seen_errors[next(iter(self._seen_errors))]
            logger.error("config watcher: %s", message)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
