"""Standalone-parity resolution rules (docs/configuration.md#resolution-what-a-command-of-the-profile-gets).

Each function computes what a standalone process serving one profile would
use, from that profile's files alone plus the small base of the process
environment that every process inherits.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from multiplex.profiles import CredentialFile, ProfileState, TerminalSettings
from multiplex.profiles._child import child

__all__ = [
    "CREDENTIALS_MOUNT_ROOT",
    "CredentialMount",
    "base_env",
    "command_env",
    "credential_mounts",
    "redaction_switch",
    "resolve_cwd",
]

CREDENTIALS_MOUNT_ROOT = "/run/credentials"
_PLACEHOLDERS = {None, "", ".", "auto", "cwd"}
_BASE_NAMES = ("PATH", "LANG", "TERM", "HOME")
_FALSE = {"0", "false", "no", "off"}
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True, slots=True)
class CredentialMount:
    """Where one credential file appears for a command.

    ``target`` is ``/run/credentials/<relative>`` (read-only) for container
    backends and ``<relative>`` inside the per-run ``$CREDENTIALS_DIRECTORY`` for
    the local backend.
    """

    relative: str
    source: Path
    target: str
    read_only: bool = True


class _ProcessBase:
    # The process environment's base, with the raw os.environ contents it came
    # from (one tuple: replaced whole). A view is built per home (10,000 at start)
    # and os.environ decodes every key it yields; comparing the raw contents is
    # one C-level dict comparison.
    cached: ClassVar[tuple[dict[bytes, bytes], dict[str, str]] | None] = None


def base_env(environ: Mapping[str, str]) -> dict[str, str]:
    """PATH, LANG, LC_*, TERM and HOME from the process environment; nothing else."""
    raw = getattr(environ, "_data", None) if environ is os.environ else None
    cached = _ProcessBase.cached
    if cached is not None and isinstance(raw, dict) and raw == cached[0]:
        return dict(cached[1])
    # Keys first, values only for the few kept (os.environ decodes every value read).
    base = {k: environ[k] for k in environ if k in _BASE_NAMES or k.startswith("LC_")}
    if isinstance(raw, dict):
        _ProcessBase.cached = (dict(raw), dict(base))
    return base


def resolve_cwd(terminal: TerminalSettings, home: Path, process_home: str | None) -> Path | None:
    """The working directory of a profile's commands; None = the backend's default.

    docs/configuration.md#resolution-what-a-command-of-the-profile-gets: for
    the ``local`` backend a placeholder, and the home folder itself, are the
    home's ``workspace/`` (the home's own files are never a command's to write).
    """
    value = terminal.cwd
    if value is None or value.strip() in _PLACEHOLDERS:
        return child(home, "workspace") if terminal.backend == "local" else None
    value = value.strip()
    if value == "~" or value.startswith("~/"):
        base = process_home or str(Path.home())
        path = Path(base + value[1:])
    else:
        path = Path(value)
        path = path if path.is_absolute() else home / path
    if terminal.backend == "local" and os.path.realpath(path) == os.path.realpath(home):
        return child(home, "workspace")
    return path


def command_env(
    state: ProfileState, base: Mapping[str, str]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The environment of a profile's commands and the warnings it produced."""
    terminal = state.settings.terminal
    env = dict(base)
    env.update(terminal.env)
    warnings: list[str] = []
    for name in terminal.env_passthrough:
        if name in state.dotenv:
            env[name] = state.dotenv[name]
        else:
            warnings.append(f"terminal.env_passthrough: {name} is not set in .env")
    return env, tuple(warnings)


def redaction_switch(state: ProfileState) -> bool:
    """``security.redact_secrets``, overridden by ``.env`` MULTIPLEX_REDACT_SECRETS; unreadable = on."""
    override = state.dotenv.get("MULTIPLEX_REDACT_SECRETS")
    if override is not None:
        word = override.strip().lower()
        if word in _FALSE:
            return False
        if word in _TRUE:
            return True
        return True  # unreadable: fail safe
    return state.settings.security.redact_secrets


def credential_mounts(
    files: tuple[CredentialFile, ...], backend: str
) -> tuple[CredentialMount, ...]:
    """The mount plan of a profile's credential files for its backend (docs/execution.md)."""
    if not files:
        return ()
    if backend == "local":
        return tuple(
            CredentialMount(f.relative, f.source, os.path.normpath(f.relative)) for f in files
        )
    return tuple(
        CredentialMount(
            f.relative, f.source, f"{CREDENTIALS_MOUNT_ROOT}/{os.path.normpath(f.relative)}"
        )
        for f in files
    )
