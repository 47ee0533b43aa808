"""Who owns a kernel: one slot per (profile, session, delegation chain) (docs/kernels.md#ownership).

A :class:`KernelSlot` holds at most one live :class:`KernelProcess` at a time
and runs its cells one after another. The slots of one profile live in that
profile's :class:`KernelTable`, a per-profile resource reached through the
scope; nothing of one profile's kernels is reachable from another's.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from multiplex.execution.kernels._channel import CellAuthority
from multiplex.scopes import ProfileScope

if TYPE_CHECKING:
    from multiplex.execution.kernels._process import KernelProcess

__all__ = ["KERNELS_KEY", "KernelKey", "KernelSlot", "KernelTable", "key_of"]

KERNELS_KEY = "execution.kernels"


@dataclass(frozen=True, slots=True)
class KernelKey:
    """A kernel's owner: the profile, the session and the delegation chain above it."""

    profile: str
    session: str
    # (profile, session) of each enclosing turn, nearest first: a delegated
    # child's kernel is never its parent's or a sibling's with another chain.
    chain: tuple[tuple[str, str], ...] = ()

    def label(self) -> str:
        above = "".join(f" < {p}/{s}" for p, s in self.chain)
        return f"{self.profile}/{self.session}{above}"


def key_of(scope: ProfileScope) -> KernelKey:
    """The kernel key of a turn."""
    chain: list[tuple[str, str]] = []
    parent = scope.parent
    while parent is not None:
        chain.append((parent.name, parent.session))
        parent = parent.parent
    return KernelKey(scope.name, scope.session, tuple(chain))


class KernelSlot:
    """The kernel of one owner; ``lock`` is held for the whole of each cell."""

    def __init__(self, key: KernelKey) -> None:
        self.key = key
        self.id = f"k-{secrets.token_hex(4)}"
        self.lock = threading.Lock()
        self.process: KernelProcess | None = None
        self.epoch = -1  # config epoch the process was last checked against
        self.cell: CellAuthority | None = None
        self.cancel = threading.Event()
        self.cancel_cause: str | None = None
        self.removed = False
        self.last_used = time.monotonic()
        self.last_used_at = time.time()
        self.idle_timeout = 1800.0
        self.ended_note: str | None = None  # why the previous process ended, for the next cell

    def renew_id(self) -> None:
        """Each process gets its own id (a fresh kernel is a different kernel)."""
        self.id = f"k-{secrets.token_hex(4)}"

    @property
    def busy(self) -> bool:
        return self.lock.locked()

    def touch(self, idle_timeout: float) -> None:
        self.last_used = time.monotonic()
        self.last_used_at = time.time()
        self.idle_timeout = idle_timeout

    def idle_for(self, now: float) -> float:
        return now - self.last_used

    def describe(self) -> dict[str, object]:
        """The ``GET /v1/kernels`` row of this kernel (a live process only)."""
        proc = self.process
        return {
            "kernel_id": self.id,
            "profile": self.key.profile,
            "session": self.key.session,
            "chain": [f"{p}/{s}" for p, s in self.key.chain],
            "pid": proc.pid if proc is not None else None,
            "started": proc.started if proc is not None else None,
            "last_used": self.last_used_at,
            "memory_bytes": proc.memory() if proc is not None else 0,
            "busy": self.busy,
            "sandbox": proc.sandbox if proc is not None else None,
        }


class KernelTable:
    """The kernel slots of ONE profile (a per-profile resource)."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.slots: dict[KernelKey, KernelSlot] = {}

    def __len__(self) -> int:
        return len(self.slots)

    def labels(self) -> list[str]:
        """Every owner with a kernel, sorted (what the isolation audit compares)."""
        return sorted(k.label() for k, s in list(self.slots.items()) if s.process is not None)
