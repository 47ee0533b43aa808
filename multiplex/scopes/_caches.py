"""Per-profile caches (docs/configuration.md#resolution-what-a-command-of-the-profile-gets): one cache object per (resolved home, name)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from multiplex.profiles import open_dir

__all__ = ["CACHES_KEY", "ProfileCache", "ProfileCaches"]

# Resource key on the owning Profile; the "caches" surface owns it.
CACHES_KEY = "caches"


class ProfileCaches:
    """Every named cache of one profile home (a per-profile resource)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._caches: dict[str, ProfileCache] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> ProfileCache:
        cache = self._caches.get(name)
        if cache is None:
            with self._lock:
                cache = self._caches.setdefault(name, ProfileCache(self.home, name))
        return cache

    def all(self) -> dict[str, ProfileCache]:
        return dict(self._caches)


class ProfileCache(MutableMapping[str, Any]):
    """A thread-safe mapping that belongs to exactly one profile home.

    ``directory`` is ``<home>/cache/<name>`` for caches that persist; it is
    created on first use of :meth:`path`.
    """

    def __init__(self, home: Path, name: str) -> None:
        self.home = home
        self.name = name
        self.directory = home / "cache" / name
        self._data: dict[str, Any] = {}
        self._lock = threading.Lock()

    def path(self, *parts: str) -> Path:
        """A path inside this cache's directory (created if missing).

        The folders are made without following links (docs/security.md#files-the-supervisor-writes):
        a ``cache`` a command replaced by a link raises ``LinkRefused`` (an ``OSError``).
        """
        os.close(open_dir(self.home, Path("cache") / self.name, create=True))
        return self.directory.joinpath(*parts)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        with self._lock:
            self._data[key] = value

    def __delitem__(self, key: str) -> None:
        with self._lock:
            del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ProfileCache({self.name!r}, home={str(self.home)!r}, size={len(self)})"
