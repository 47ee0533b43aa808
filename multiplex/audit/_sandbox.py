"""The audit's private copy of the served homes (docs/audit.md).

The audit never writes the operator's files: it copies each home's
``config.yaml``, ``.env``, credential files and the directories its cwd needs
into a private temporary directory (mode 0700, removed afterwards), adds the
canaries there, and writes a supervisor config serving the copies. Both sides
of the audit (the multiplexed process and the standalone probes) run on the
same copies, so paths match.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from multiplex.audit._canaries import (
    LEAK_RULES,
    MARK_VAR,
    TOKEN_VAR,
    Canaries,
    make_canaries,
    write_manifest,
)
from multiplex.profiles import GrantText, Profile, ProfileSettings
from multiplex.supervision import SupervisorConfig, load_supervisor_config

__all__ = ["Sandbox", "build_sandbox"]

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class Sandbox:
    """A private copy of the served homes with canaries, and its config file."""

    root: Path
    config: Path
    manifest: Path
    homes: Mapping[str, Path]
    canaries: Mapping[str, Canaries]
    skipped: Mapping[str, str] = field(default_factory=dict)  # broken profiles: name -> error

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def build_sandbox(config_path: Path, only: Sequence[str] | None = None) -> Sandbox:
    """Copy the homes served by ``config_path`` into a fresh private directory."""
    config = load_supervisor_config(config_path)
    homes = config.homes()
    if only is not None:
        homes = {n: h for n, h in homes.items() if n in set(only)}
    root = Path(tempfile.mkdtemp(prefix="multiplex-audit-"))
    os.chmod(root, 0o700)
    try:
        return _populate(root, config, homes)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _populate(root: Path, config: SupervisorConfig, homes: Mapping[str, Path]) -> Sandbox:
    copies: dict[str, Path] = {}
    canaries: dict[str, Canaries] = {}
    skipped: dict[str, str] = {}
    used: set[str] = set()
    for name, home in homes.items():
        dest = root / "homes" / _unique(_SLUG.sub("-", name) or "profile", used)
        settings = _copy_home(home.resolve(), dest)
        copies[name] = dest
        if settings is None:
            # Broken in the original too: copied verbatim, served with its error,
            # and left out of the comparison (a standalone process refuses it as well).
            skipped[name] = Profile(name, dest).reload().error or "not loaded"
            continue
        canary = make_canaries(name)
        if _add_canaries(dest, settings, canary, name):
            canaries[name] = canary
        else:
            skipped[name] = "the canaries could not be added to the sandbox copy"
    manifest = root / "canaries.json"
    write_manifest(manifest, canaries)
    sandbox_config = root / "multiplex.yaml"
    _write_config(sandbox_config, config, copies)
    return Sandbox(root, sandbox_config, manifest, copies, canaries, skipped)


def _unique(slug: str, used: set[str]) -> str:
    candidate, n = slug, 1
    while candidate in used:
        n += 1
        candidate = f"{slug}-{n}"
    used.add(candidate)
    return candidate


def _copy_home(home: Path, dest: Path) -> ProfileSettings | None:
    """Copy what the audit needs; return the copy's settings, or None if it is broken."""
    dest.mkdir(parents=True)
    for sub in ("cache", "logs"):
        (dest / sub).mkdir()
    for name in ("config.yaml", ".env"):
        if (home / name).is_file():
            shutil.copy2(home / name, dest / name)
    if (home / "credentials").is_dir():
        _copy_tree(home, home / "credentials", dest / "credentials")
    else:
        (dest / "credentials").mkdir(mode=0o700)
    probe = Profile(home.name, dest)
    if probe.reload().result == "error" or not probe.loaded:
        return None
    settings = probe.state.settings
    for rel in settings.terminal.credential_files:
        _copy_file(home, home / rel, dest / rel)
    cwd = settings.terminal.cwd
    # A relative cwd is against the home: the copy needs that directory
    # (empty: its contents are never compared) when the original has it.
    if cwd and not cwd.startswith("~") and not os.path.isabs(cwd) and (home / cwd).is_dir():
        (dest / cwd).mkdir(parents=True, exist_ok=True)
    return settings


def _copy_tree(home: Path, source: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True, mode=0o700)
    for entry in sorted(source.rglob("*")):
        target = dest / entry.relative_to(source)
        if entry.is_dir() and not entry.is_symlink():
            target.mkdir(parents=True, exist_ok=True)
        else:
            _copy_file(home, entry, target)


def _copy_file(home: Path, source: Path, dest: Path) -> None:
    # A symlink that resolves inside the home becomes a plain copy (the copy's
    # own home is elsewhere); one that escapes is kept as it is, so the copy is
    # refused exactly as the original is (docs/configuration.md#configyaml-keys).
    if dest.exists() or dest.is_symlink():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    resolved = source.resolve()
    if source.is_symlink() and not resolved.is_relative_to(home):
        os.symlink(os.readlink(source), dest)
    elif resolved.is_file():
        shutil.copy2(resolved, dest)


def _add_canaries(dest: Path, settings: ProfileSettings, canary: Canaries, name: str) -> bool:
    config_path, env_path = dest / "config.yaml", dest / ".env"
    original_config = config_path.read_bytes() if config_path.exists() else b""
    original_env = env_path.read_bytes() if env_path.exists() else b""
    creds = dest / "credentials"
    creds.mkdir(exist_ok=True, mode=0o700)
    cred = dest / canary.cred_relative
    cred.write_text(canary.cred_content + "\n", encoding="utf-8")
    os.chmod(cred, 0o600)
    env_text = original_env.decode("utf-8", "replace")
    if env_text and not env_text.endswith("\n"):
        env_text += "\n"
    env_text += f"# multiplex audit canaries (sandbox copy only)\n{TOKEN_VAR}={canary.token}\n{MARK_VAR}={canary.mark}\n"
    env_path.write_text(env_text, encoding="utf-8")
    os.chmod(env_path, 0o600)
    config_path.write_text(
        _config_with_canaries(original_config, settings, canary), encoding="utf-8"
    )
    check = Profile(name, dest)
    if check.reload().result == "error" or not check.loaded:
        config_path.write_bytes(original_config)
        env_path.write_bytes(original_env)
        cred.unlink()
        return False
    return True


def _config_with_canaries(original: bytes, settings: ProfileSettings, canary: Canaries) -> str:
    # The original loaded cleanly, so it is a mapping (or empty). The lists are
    # rebuilt from the VALIDATED settings, so legacy stringified lists keep
    # their recovered meaning.
    doc: dict[str, Any] = yaml.safe_load(original) or {}
    terminal = doc.get("terminal")
    terminal = dict(terminal) if isinstance(terminal, dict) else {}
    t = settings.terminal
    if terminal.get("network") is False:  # a bare `off` read as YAML 1.1; write the word back
        terminal["network"] = "off"
    terminal["env_passthrough"] = [*t.env_passthrough, TOKEN_VAR, MARK_VAR]
    terminal["credential_files"] = [*t.credential_files, canary.cred_relative]
    doc["terminal"] = terminal
    # A grant (docs/allowlist.md#grants) is written back as the mapping it is.
    entries = [e.as_data() if isinstance(e, GrantText) else e for e in settings.command_allowlist]
    doc["command_allowlist"] = [*entries, canary.rule, *LEAK_RULES]
    approvals = doc.get("approvals")
    if isinstance(approvals, dict) and "mode" in approvals:
        # A bare `off` was read as False; written back it must stay the text "off".
        doc["approvals"] = {**approvals, "mode": settings.approvals.mode}
    header = "# multiplex audit: sandbox copy with canaries; the operator's file is untouched\n"
    return header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def _write_config(path: Path, config: SupervisorConfig, copies: Mapping[str, Path]) -> None:
    default = config.default_profile if config.default_profile in copies else None
    doc = {
        "profiles": [{"name": name, "home": str(home)} for name, home in copies.items()],
        "default_profile": default,
        "routes": [
            {k: v for k, v in r.model_dump().items() if v is not None}
            for r in config.routes
            if r.profile in copies
        ],
        "watch": {"mode": "off"},
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
