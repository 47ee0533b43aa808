"""Folders of the home that hold start-up places (docs/security.md, ``persistence``).

An archive extracted, a tree copied or a repository cloned into one of these
may put a file at any place below it: ``~/.config/autostart/x.desktop``,
``~/.config/systemd/user/x.service``, ``~/.config/fish/conf.d/x.fish``,
``~/.local/bin/git`` (ahead of the real one on PATH), ``~/Library/LaunchAgents``. Such a
write counts as a write of each of them, as one into the home itself does. A pure leaf.
"""

from __future__ import annotations

import posixpath

__all__ = ["holds_startup"]

_FOLDERS = frozenset(
    {"~/.config", "~/.local", "~/.local/share", "~/.local/bin", "~/.config/systemd",
     "~/.config/systemd/user", "~/.config/fish", "~/.config/environment.d", "~/Library",
     "~/Library/LaunchAgents", "~/.kde", "~/.kde4", "~/.ssh", "~/bin"}
)  # fmt: skip


def holds_startup(path: str) -> bool:
    """``path`` (``~/…`` form) is a folder whose subtree holds start-up places."""
    if not path.startswith("~/"):
        return False
    norm = posixpath.normpath(path)
    return norm in _FOLDERS or norm.removesuffix("/*") in _FOLDERS
