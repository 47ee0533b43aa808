"""Watching profile homes: one observer for every home, debounced reloads.

See docs/configuration.md#the-watcher.
"""

from multiplex.watching._debounce import Debouncer
from multiplex.watching._router import SUPERVISOR_KEY, WATCHED_FILES
from multiplex.watching._watcher import ConfigWatcher, WatchMode

__all__ = ["SUPERVISOR_KEY", "WATCHED_FILES", "ConfigWatcher", "Debouncer", "WatchMode"]
