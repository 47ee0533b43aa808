"""Operator-facing descriptions of profiles, secrets masked (CLI and gateway share them)."""

from __future__ import annotations

from typing import Any

from multiplex.execution import sandbox_of
from multiplex.profiles import Profile
from multiplex.redaction import looks_secret_name, redact_always
from multiplex.supervision._supervisor import Supervisor

__all__ = ["describe_profile", "profile_row"]

MASK = "[REDACTED:known]"


def profile_row(sup: Supervisor, profile: Profile) -> dict[str, Any]:
    """One row of ``profiles list`` (docs/cli.md field names)."""
    row: dict[str, Any] = {
        "name": profile.name,
        "home": str(profile.home),
        "backend": None,
        "cwd": None,
        "redact_secrets": None,
        "allowlist_size": None,
        "allowlist_invalid": None,
        "sandbox": None,
        "sandbox_warning": None,
        "status": profile.status,
        "error": profile.error,
        # docs/configuration.md#validation: broken since then, its last good config serves.
        "serving_last_good_since": profile.last_good_since,
    }
    if profile.error is None:
        # docs/operations.md#a-full-disk: its last record failed, so it runs nothing.
        failing = sup.gate.recorder.health.failing(profile.home)
        if failing is not None:
            row.update(status="degraded", error=failing)
    if profile.loaded:
        view = sup.view(profile.name) if profile.name in sup.profiles else None
        if view is not None:
            row.update(
                backend=view.backend,
                cwd=None if view.cwd is None else str(view.cwd),
                redact_secrets=view.redact_secrets,
                allowlist_size=profile.allowlist.size,
                allowlist_invalid=len(profile.allowlist.invalid()),
            )
            # docs/execution.md#the-sandbox: an unsandboxed local profile says so everywhere.
            sandbox, warning = sandbox_of(view.backend, view.terminal.sandbox)
            row.update(sandbox=sandbox, sandbox_warning=warning)
    return row


def _masked_env(env: dict[str, str], sup: Supervisor) -> dict[str, str]:
    known = sup.known_secrets()
    out: dict[str, str] = {}
    for name, value in sorted(env.items()):
        if looks_secret_name(name):
            out[name] = MASK
        else:
            out[name] = redact_always(value, known)
    return out


def describe_profile(sup: Supervisor, name: str) -> dict[str, Any]:
    """Effective settings of one profile, secrets masked (``profiles show``)."""
    profile = sup.profile(name)
    data = profile_row(sup, profile)
    data["epoch"] = profile.epoch
    data["last_reload"] = profile.last_reload
    if not profile.loaded:
        return data
    view = sup.view(name)
    settings = profile.state.settings
    data["warnings"] = list(view.warnings) + (
        [data["sandbox_warning"]] if data["sandbox_warning"] else []
    )
    data["settings"] = {
        "terminal": {
            **settings.terminal.model_dump(mode="json"),
            "env": _masked_env(dict(settings.terminal.env), sup),
        },
        "command_allowlist": sorted(profile.allowlist.rules()),
        "approvals": settings.approvals.model_dump(mode="json"),
        "security": settings.security.model_dump(mode="json"),
    }
    data["command_env"] = _masked_env(dict(view.env), sup)
    data["credential_mounts"] = [
        {"relative": m.relative, "source": str(m.source), "target": m.target}
        for m in view.credential_mounts
    ]
    data["dotenv_names"] = sorted(profile.state.dotenv)
    return data
