"""Watching profile homes: one observer for every home, debounced reloads.

See docs/configuration.md#the-watcher.
"""

from multiplex.watching._debounce import Debouncer
from multiplex.watching._watcher import WATCHED_FILES, ConfigWatcher, WatchMode

__all__ = ["WATCHED_FILES", "ConfigWatcher", "Debouncer", "WatchMode"]
