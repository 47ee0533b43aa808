"""Which paths a sandbox shows, hides or lets write beyond the system's runtime (docs/execution.md#the-sandbox).

``_root_view`` shows the system; this module finds the rest of a command's
view, each path at its real location: ``terminal.read_paths`` read-only; the
writable folders (the cwd, the home's ``cache/`` and ``workspace/``,
``terminal.writable_paths``), none bound again inside another, and where the
command starts; the other homes, the folders holding them and the
supervisor's config hidden; the own home's ``.env``, credential sources,
config and logs kept from the command (docs/security.md#the-sandbox-view).
``sandbox_argv`` in ``_sandbox`` puts them in their order.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiplex.scopes import ProfileScope

__all__ = [
    "WORKSPACE",
    "Writable",
    "hidden_binds",
    "own_home_hides",
    "read_paths",
    "workspace_of",
    "writable_binds",
]

WORKSPACE = "workspace"  # of the home: the default cwd, the sandbox's HOME


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it (both absolute and normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _real(path: Path) -> Path:
    """``os.path.realpath(path)``, resolved by the kernel when the path exists.

    One open and one readlink where ``realpath`` takes an lstat per component
    in Python: every hidden home is resolved for each command. A path that
    does not exist (or cannot be opened) is resolved by ``realpath``.
    """
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return Path(os.path.realpath(path))
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        resolved = ""
    finally:
        os.close(fd)
    if not resolved.startswith("/") or resolved.endswith(" (deleted)"):
        return Path(os.path.realpath(path))
    return Path(resolved)


@dataclass(frozen=True, slots=True)
class Writable:
    """The folders a command may write, each bound at its real path, and where it starts.

    ``inside_home`` are bound after the read-only home, ``outside_home`` before
    the hides (so a broad cwd cannot re-expose a hidden home).
    """

    inside_home: tuple[Path, ...]
    outside_home: tuple[Path, ...]
    chdir: Path | None


def _own_folder(path: Path) -> Path | None:
    """``path`` (a folder of the home), made if missing; None unless it is a real folder.

    Made by whichever of the profile's first commands comes first (two at once
    both see it missing). A symlinked one could point anywhere on the host: it is
    never used; only a real folder is (lstat: a link is never followed).
    """
    for attempt in (0, 1):
        try:
            return path if stat.S_ISDIR(os.lstat(path).st_mode) else None
        except FileNotFoundError:
            if attempt:
                return None
        except OSError:
            return None
        with contextlib.suppress(OSError):  # made meanwhile, or a read-only home: not ours to make
            os.mkdir(path, 0o700)
    return None


def read_paths(configured: Iterable[str]) -> list[Path]:
    """``terminal.read_paths`` that can be shown: absolute, existing, no link on the way.

    The load refuses any other (docs/configuration.md); one that became a link
    since is not bound (a bind made from the host would follow it).
    """
    shown: list[Path] = []
    for item in configured:
        path = Path(os.path.abspath(item))
        if path.is_absolute() and path.exists() and _real(path) == path:
            shown.append(path)
    return shown


def workspace_of(scope: ProfileScope) -> Path | None:
    """The profile's own ``workspace/``: its default cwd and, sandboxed, its ``HOME``."""
    return _own_folder(_workspace(scope.home))


@functools.lru_cache(maxsize=4096)
def _workspace(home: Path) -> Path:
    # Asked for at every run: the path once per home, its lstat every time.
    return home / WORKSPACE


def writable_binds(scope: ProfileScope) -> Writable:
    """The folders a command of ``scope`` may write, and its working directory inside."""
    # docs/execution.md#the-sandbox: a path inside another writable one is not
    # bound again. The command can already write there, so it can make any name
    # there a symlink, and a bind made from the host follows it: anywhere on the
    # host. Reached through the outer bind instead, a link resolves inside the
    # sandbox's own view (read-only or hidden), and so does the working directory.
    home = _real(scope.home)
    homes = [home, Path(os.path.abspath(scope.home))]
    wanted: list[Path] = []  # absolute as configured: symlinks not followed
    cwd = scope.cwd if scope.cwd is not None and scope.cwd.is_dir() else None
    if cwd is not None and _real(cwd) == home:
        cwd = None
    if cwd is not None:
        wanted.append(Path(os.path.abspath(cwd)))
    for own in (scope.home / "cache", scope.home / WORKSPACE):
        if _own_folder(own) is not None:
            wanted.append(Path(os.path.abspath(own)))
    for item in scope.view.terminal.writable_paths:
        expanded = Path(os.path.expanduser(item))
        path = expanded if expanded.is_absolute() else scope.home / expanded
        if path.is_dir() or path.is_file():
            wanted.append(Path(os.path.abspath(path)))
    # The home folder itself is never writable: its config.yaml, the allowlist's
    # lock and intents live there (docs/security.md#the-sandbox-view).
    wanted = [path for path in wanted if _real(path) != home]
    real = {path: _real(path) for path in wanted}

    def outer(path: Path) -> tuple[Path, Path] | None:
        """The writable path ``path`` lies in, bound in the layer its location is in
        (the home is bound read-only over everything outside it), and its real path."""
        in_home = _under(path, homes)
        for other in wanted:
            if other == path or _under(real[other], [home]) != in_home:
                continue
            for root in (other, real[other]):
                if path != root and path.is_relative_to(root):
                    return root, real[other]
        return None

    binds: list[Path] = []
    for path in dict.fromkeys(wanted):
        if outer(path) is None and real[path] not in binds:
            binds.append(real[path])
    chdir = None
    if cwd is not None:
        start = Path(os.path.abspath(cwd))
        found = outer(start)
        chdir = real[start] if found is None else found[1] / start.relative_to(found[0])
    return Writable(
        tuple(p for p in binds if _under(p, [home])),
        tuple(p for p in binds if not _under(p, [home])),
        chdir,
    )


def hidden_binds(home: Path, hidden: Sequence[Path], shown: Sequence[Path]) -> list[str]:
    """bwrap arguments hiding ``hidden`` and the folder holding ``home`` (a real path), never ``home``.

    ``shown``: the host folders bound before the hides (the system's, the
    runtime's, read paths, writable paths outside the home). A hidden path at,
    under or above none of them is on the sandbox's fresh root or ``/tmp``
    already, where nothing of the host is: it costs no mount.
    """
    hide = {_real(Path(p)) for p in hidden} | {home.parent}
    hide.discard(home)
    roots = [str(root) for root in shown]
    argv: list[str] = []
    # Sets and string prefixes, not pathlib: thousands of homes are hidden from each command.
    for path in sorted(hide, key=lambda p: len(p.parts)):
        if any(parent in hide for parent in path.parents):
            continue  # inside a hidden folder already: not even its name shows
        text = str(path)
        if not any(_within(text, root) or _within(root, text) for root in roots):
            continue
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        elif path.exists():
            argv += ["--ro-bind", "/dev/null", str(path)]
    return argv


def own_home_hides(
    scope: ProfileScope, home: Path, writable_inside: Sequence[Path] = ()
) -> list[str]:
    """bwrap arguments keeping the own home's secrets, config and logs from the command.

    ``writable_inside``: the writable binds inside the home (``Writable.inside_home``),
    bound before these.
    """
    # The home's secrets reach a command only as its env and /run/credentials;
    # its config, logs and allowlist are never writable from inside.
    argv: list[str] = []
    for name in (".env",):
        if (home / name).is_file():
            argv += ["--ro-bind", "/dev/null", str(home / name)]
    emptied = [
        home / name
        for name in ("credentials", ".multiplex-state")  # the allowlist's pending intents
        if (home / name).is_dir() and not (home / name).is_symlink()
    ]
    for mount in scope.credential_mounts:
        source = _real(mount.source)
        # One inside a folder emptied below needs no mount of its own.
        if source.is_file() and _under(source, [home]) and not _under(source, emptied):
            argv += ["--ro-bind", "/dev/null", str(source)]
    for folder in emptied:
        argv += ["--tmpfs", str(folder)]
    for name in ("config.yaml", "logs"):
        # Read-only with the home already, unless a writable bind reaches it.
        path = home / name
        if (
            path.exists()
            and not path.is_symlink()
            and any(_under(path, [w]) or _under(w, [path]) for w in writable_inside)
        ):
            argv += ["--ro-bind", str(path), str(path)]
    # docs/security.md#finished-output: finished runs' output, every session's, stays unread.
    runs = home / "logs" / "runs"
    if runs.is_dir() and not runs.is_symlink() and not (home / "logs").is_symlink():
        argv += ["--tmpfs", str(runs)]
    return argv
