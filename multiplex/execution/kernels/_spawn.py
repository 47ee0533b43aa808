"""What a kernel starts with: the profile's scope, frozen (docs/kernels.md#environment).

The environment is the scope's command env — the same mapping shell commands
get, built once by :mod:`multiplex.scopes` — plus ``CREDENTIALS_DIRECTORY``
when the profile has credential files. The fingerprint says whether a later
config epoch changed any of it, which makes a running kernel stale.
:class:`~multiplex.execution.kernels._manager.SpecManager` launches exactly that.
This module imports no jupyter-client: the pool reads it on every CLI call, jupyter-client
and zmq load with the first kernel.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from multiplex.scopes import ProfileScope

__all__ = ["ENGINE_MODULE", "KernelSpawn", "fingerprint", "kernel_argv", "spawn_for"]


@dataclass(frozen=True, slots=True)
class KernelSpawn:
    """The frozen inputs of one kernel process."""

    cwd: Path | None
    env: Mapping[str, str]
    fingerprint: str


def fingerprint(scope: ProfileScope) -> str:
    """A digest of everything a kernel freezes at spawn: cwd, env, credential files."""
    h = hashlib.sha256()
    h.update(f"cwd={scope.cwd}\0backend={scope.backend}\0".encode())
    terminal = scope.view.terminal
    # The sandbox is frozen at spawn too (docs/execution.md#the-sandbox).
    h.update(f"sandbox={terminal.sandbox}\0network={terminal.network}\0".encode())
    h.update(f"writable={sorted(terminal.writable_paths)}\0".encode())
    for name, value in sorted(scope.env.items()):
        h.update(f"env {name}={value}\0".encode())
    for mount in scope.credential_mounts:
        try:
            st = mount.source.stat()
            stamp = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
        except OSError:
            stamp = "missing"
        h.update(f"cred {mount.target}={mount.source}@{stamp}\0".encode())
    return h.hexdigest()


def spawn_for(scope: ProfileScope) -> KernelSpawn:
    """The kernel inputs of ``scope`` (its command env as shell commands get it)."""
    return KernelSpawn(scope.cwd, dict(scope.env), fingerprint(scope))


# The engine (``_engine.py``) is loaded by path under this name: ``python -m``
# of a package module would import the whole multiplex package first.
ENGINE_MODULE = "_multiplex_kernel_engine"
_BOOT = (
    "import sys, importlib.util as u\n"
    "if sys.path and sys.path[0] == '': del sys.path[0]\n"  # as ipykernel_launcher does
    "s = u.spec_from_file_location({name!r}, {path!r})\n"
    "m = u.module_from_spec(s); sys.modules[s.name] = m; s.loader.exec_module(m); m.main()"
)


def kernel_argv(runtime: Path) -> list[str]:
    """The kernel command line; ``{connection_file}`` is filled by jupyter-client."""
    engine = Path(__file__).resolve().with_name("_engine.py")
    return [
        sys.executable,
        "-c",
        _BOOT.format(name=ENGINE_MODULE, path=str(engine)),
        str(runtime),
        "-f",
        "{connection_file}",
        # No shared history database, no colour codes in tracebacks; results
        # are read as text/plain only, so no other format is computed.
        "--HistoryManager.enabled=False",
        "--InteractiveShell.colors=nocolor",
        "--DisplayFormatter.active_types=text/plain",
    ]
