"""Validate a profile's credential files (docs/configuration.md#configyaml-keys, docs/execution.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from multiplex._errors import ProfileConfigError

__all__ = ["CredentialFile", "plan_credential_files", "read_secret_file"]

MAX_SECRET_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class CredentialFile:
    """One credential file of a home: its path as configured and where it really is."""

    relative: str
    source: Path


def plan_credential_files(
    home: Path, relative: tuple[str, ...], *, config: Path
) -> tuple[tuple[CredentialFile, ...], tuple[str, ...]]:
    """Resolve credential paths inside ``home``; return the files and warnings.

    Symlinks are resolved and the target re-checked: a file that resolves
    outside the home is a configuration error (docs/configuration.md#configyaml-keys). A missing file is a
    warning and is left out of the plan.
    """
    root = home.resolve()
    files: list[CredentialFile] = []
    warnings: list[str] = []
    for index, rel in enumerate(relative):
        candidate = (root / rel).resolve()
        if not candidate.is_relative_to(root):
            raise ProfileConfigError(
                f"{rel!r} resolves outside the profile home",
                file=config,
                key=f"terminal.credential_files.{index}",
            )
        if not candidate.is_file():
            warnings.append(f"{config}: terminal.credential_files.{index}: {rel!r} does not exist")
            continue
        files.append(CredentialFile(rel, candidate))
    return tuple(files), tuple(warnings)


def read_secret_file(path: Path) -> str:
    """The first 64 KiB of a credential file as text (for redaction only)."""
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_SECRET_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
