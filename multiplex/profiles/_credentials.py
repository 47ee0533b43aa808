"""Validate a profile's credential files (docs/configuration.md#configyaml-keys, docs/execution.md)."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

from multiplex._errors import ProfileConfigError
from multiplex.profiles._nofollow import read_inside

__all__ = [
    "MAX_CREDENTIAL_BYTES",
    "CredentialFile",
    "plan_credential_files",
    "read_credential",
    "read_secret_file",
]

MAX_SECRET_BYTES = 64 * 1024
MAX_CREDENTIAL_BYTES = 1024 * 1024


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
    if not relative:
        return (), ()  # nothing to resolve: no walk of the home's path
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


def read_credential(home: Path, relative: str) -> bytes:
    """The bytes of one credential file, checked now, at the moment of use.

    Called for every run that mounts the file (docs/security.md#credentials-checked-when-used):
    whatever an earlier load said, the file is opened under ``home`` and refused
    (``ProfileConfigError`` naming the file, never its content) if what it really
    is lies outside the home, is not a regular file, has another hard link, is
    larger than 1 MiB or is missing.
    """
    try:
        return read_inside(home, relative, max_bytes=MAX_CREDENTIAL_BYTES)
    except OSError as exc:
        why = str(exc) if exc.errno == errno.ELOOP else (exc.strerror or "cannot read")
        why = why.removeprefix(f"{relative}: ")
        raise ProfileConfigError(why, file=Path(home) / relative) from None


def read_secret_file(home: Path, relative: str) -> str:
    """The first 64 KiB of a credential file as text (for redaction only); "" if refused."""
    try:
        data = read_inside(home, relative, max_bytes=MAX_CREDENTIAL_BYTES)
    except OSError:
        return ""
    return data[:MAX_SECRET_BYTES].decode("utf-8", "replace")
