"""The state entry each running ``multiplex up`` keeps in ``.multiplex/`` (docs/operations.md#the-admin-token).

One folder per gateway, named by its port: ``.multiplex/gateways/<port>/``
holds ``url``, ``pid`` and, when ``up`` generated one, ``admin-token`` (files
0600, folders 0700). A gateway writes only its own entry and, when it stops,
removes only that entry, so a second ``up`` in the same folder (another port)
never strands the first. A client picks the entry of the port its config names,
else the only live one; an entry whose process is gone is ignored.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GatewayEntry", "gateways_dir", "live_entries", "pick_entry", "write_entry"]


def gateways_dir(base_dir: Path) -> Path:
    """Where every running gateway of the project keeps its entry."""
    return base_dir / ".multiplex" / "gateways"


@dataclass(frozen=True, slots=True)
class GatewayEntry:
    """One running gateway's entry: where it serves and its generated admin token (if any)."""

    folder: Path
    port: int
    url: str
    pid: int
    token: str | None

    @property
    def token_file(self) -> Path:
        return self.folder / "admin-token"

    def remove(self) -> None:
        """Remove this entry, if it is still this process's (another ``up`` may have replaced it)."""
        with contextlib.suppress(OSError):
            if (self.folder / "pid").read_text(encoding="utf-8").strip() == str(self.pid):
                shutil.rmtree(self.folder)


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def _write_private(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    os.replace(temp, path)


def write_entry(base_dir: Path, port: int, url: str, token: str | None) -> GatewayEntry:
    """Write this process's entry for ``port``: url, pid, and the token when generated.

    Raises ``OSError`` when the folder cannot be written.
    """
    _private_dir(base_dir / ".multiplex")
    _private_dir(gateways_dir(base_dir))
    folder = gateways_dir(base_dir) / str(port)
    _private_dir(folder)
    entry = GatewayEntry(folder, port, url, os.getpid(), token)
    if token is not None:
        _write_private(entry.token_file, token)
    else:
        with contextlib.suppress(FileNotFoundError):
            entry.token_file.unlink()
    _write_private(folder / "url", url)
    _write_private(folder / "pid", str(entry.pid))  # last: a reader sees a whole entry
    return entry


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def live_entries(base_dir: Path) -> list[GatewayEntry]:
    """The entries of gateways whose process still runs, by port."""
    found: list[GatewayEntry] = []
    try:
        folders = sorted(gateways_dir(base_dir).iterdir())
    except OSError:
        return found
    for folder in folders:
        pid, url = _read(folder / "pid"), _read(folder / "url")
        if not folder.name.isdigit() or pid is None or not pid.isdigit() or url is None:
            continue
        if _alive(int(pid)):
            token = _read(folder / "admin-token")
            found.append(GatewayEntry(folder, int(folder.name), url, int(pid), token))
    return sorted(found, key=lambda e: e.port)


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def pick_entry(base_dir: Path, *, url: str | None, port: int) -> GatewayEntry | None:
    """The entry a client uses: the one serving ``url`` when given, else ``port``'s, else the only one."""
    entries = live_entries(base_dir)
    if url is not None:
        return next((e for e in entries if _same_url(e.url, url)), None)
    named = next((e for e in entries if e.port == port), None)
    if named is not None:
        return named
    return entries[0] if len(entries) == 1 else None
