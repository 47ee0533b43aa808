"""A profile's resolved settings at one config epoch (what every turn reads)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from multiplex.profiles import (
    ApprovalSettings,
    CodeExecutionSettings,
    Profile,
    TerminalSettings,
)
from multiplex.profiles._child import child
from multiplex.redaction import KnownValues
from multiplex.scopes._resolve import (
    CredentialMount,
    base_env,
    command_env,
    credential_mounts,
    redaction_switch,
    resolve_cwd,
)

__all__ = ["ProfileView", "build_view"]


@dataclass(frozen=True, slots=True)
class ProfileView:
    """Immutable, resolved per-epoch settings of one profile (docs/configuration.md#resolution-what-a-command-of-the-profile-gets)."""

    name: str
    home: Path
    epoch: int
    cwd: Path | None
    env: Mapping[str, str]
    backend: str
    redact_secrets: bool
    credential_mounts: tuple[CredentialMount, ...]
    host_mounts: tuple[str, ...]
    approvals: ApprovalSettings
    timeout: float
    known_secrets: KnownValues
    logs_dir: Path
    warnings: tuple[str, ...]
    terminal: TerminalSettings
    code_execution: CodeExecutionSettings

    @property
    def host_access(self) -> bool:
        """Whether commands can touch the host (local backend, or mounts given)."""
        return self.backend == "local" or bool(self.host_mounts)


def build_view(profile: Profile, environ: Mapping[str, str] | None = None) -> ProfileView:
    """Resolve ``profile``'s current state as a standalone process would."""
    environ = os.environ if environ is None else environ
    state = profile.state
    terminal = state.settings.terminal
    base = base_env(environ)  # HOME included, as environ holds it: one read of it
    env, env_warnings = command_env(state, base)
    return ProfileView(
        name=profile.name,
        home=profile.home,
        epoch=state.epoch,
        cwd=resolve_cwd(terminal, profile.home, base.get("HOME")),
        env=MappingProxyType(env),
        backend=terminal.backend,
        redact_secrets=redaction_switch(state),
        credential_mounts=credential_mounts(state.credentials, terminal.backend),
        host_mounts=terminal.host_mounts,
        approvals=state.settings.approvals,
        timeout=terminal.timeout,
        known_secrets=state.known_secrets,
        logs_dir=child(profile.home, "logs"),
        warnings=state.warnings + env_warnings,
        terminal=terminal,
        code_execution=state.settings.code_execution,
    )
