"""Load-time checks of the host paths a profile's sandbox shows (docs/configuration.md#validation).

``terminal.writable_paths`` and ``terminal.read_paths`` become binds made from
the host, which follow links: a path with a link on its way is refused, never
resolved, and so is the home folder itself (its ``config.yaml``, the
allowlist's lock and intents are not a command's to write). ``network: host``
loads with a warning: the command then shares the host's network.
"""

from __future__ import annotations

import os
from pathlib import Path

from multiplex._errors import ProfileConfigError
from multiplex.profiles._schema import TerminalSettings

__all__ = ["check_sandbox_paths"]


def _link_on_the_way(path: Path) -> Path | None:
    """The first component of ``path`` (absolute, normalised) that is a symlink."""
    current = Path(path.anchor)
    for part in path.parts[1:]:
        current = current / part
        if current.is_symlink():
            return current
    return None


def check_sandbox_paths(home: Path, terminal: TerminalSettings, *, config: Path) -> tuple[str, ...]:
    """Refuse unsafe sandbox paths (``ProfileConfigError`` naming the key); return warnings."""
    warnings: list[str] = []
    lists = (("writable_paths", terminal.writable_paths), ("read_paths", terminal.read_paths))
    # Resolved only when a path is named: most homes name none (thousands at start).
    real_home = Path(os.path.realpath(home)) if any(items for _, items in lists) else home
    for key, items in lists:
        for index, item in enumerate(items):
            where = f"terminal.{key}.{index}"
            expanded = Path(os.path.expanduser(item))
            path = Path(os.path.normpath(expanded if expanded.is_absolute() else home / expanded))
            if Path(os.path.realpath(path)) == real_home:
                raise ProfileConfigError(
                    f"{item!r} is the profile home itself: its config.yaml and allowlist state"
                    " are never shown writable to commands; name a folder inside it",
                    file=config,
                    key=where,
                )
            link = _link_on_the_way(path)
            if link is not None:
                raise ProfileConfigError(
                    f"{item!r} goes through the symlink {str(link)!r}; name the real path",
                    file=config,
                    key=where,
                )
            if key == "read_paths" and not path.exists():
                warnings.append(f"{config}: {where}: {item!r} does not exist; not shown")
    if terminal.network == "host" and terminal.backend == "local":
        warnings.append(
            f"{config}: terminal.network: host: commands share the host's network"
            " (loopback, the gateway's port, private ranges) with no egress proxy"
        )
    return tuple(warnings)
