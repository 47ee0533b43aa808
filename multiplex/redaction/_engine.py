"""The compiled multi-pattern engine behind redaction: Hyperscan, when it loads.

Both layers can do without it: layer 1 then matches its known forms with one
trie-shaped regex and layer 2 runs every shape's regex over the whole text, as
before the engine was added. They give the same output either way (see
``docs/redaction.md``, "Engine"); the engine only makes them faster. When the
``hyperscan`` wheel is missing or cannot run on this CPU, a warning is logged
once and the pure-Python path is used.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

__all__ = ["backend", "disable", "engine_name", "pure_python"]

_log = logging.getLogger("multiplex.redaction")


class _State:
    # None: not tried yet; False: tried and unavailable.
    module: ModuleType | bool | None = None
    forced_off = False
    lock = threading.Lock()


def _load() -> ModuleType | bool:
    try:
        import hyperscan
    except ImportError as exc:  # also a wheel built for another CPU or libc
        _log.warning(
            "redaction: the hyperscan engine is not available (%s); "
            "using the slower pure-Python matcher",
            exc,
        )
        return False
    return hyperscan


def backend() -> ModuleType | None:
    """The ``hyperscan`` module, or None when redaction runs in pure Python."""
    if _State.forced_off:
        return None
    module = _State.module
    if module is None:
        with _State.lock:
            if _State.module is None:
                _State.module = _load()
            module = _State.module
    return module if isinstance(module, ModuleType) else None


def disable(reason: str) -> None:
    """Give up on the engine for the rest of the process (it failed at run time)."""
    with _State.lock:
        if isinstance(_State.module, ModuleType):
            _log.warning(
                "redaction: the hyperscan engine failed (%s); using the slower pure-Python matcher",
                reason,
            )
        _State.module = False


def engine_name() -> str:
    """``"hyperscan"`` or ``"python"``: what new matchers are built with."""
    return "hyperscan" if backend() is not None else "python"


@contextmanager
def pure_python() -> Iterator[None]:
    """Within the block, new matchers are built without the engine (for tests and the bench).

    Matchers built earlier keep the engine they were built with.
    """
    before = _State.forced_off
    _State.forced_off = True
    try:
        yield
    finally:
        _State.forced_off = before
