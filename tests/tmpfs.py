"""A real, small, full filesystem for the tests (docs/operations.md#a-full-disk)."""

from __future__ import annotations

import contextlib
import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex.profiles import append_bytes

PAGE = 4096


@contextlib.contextmanager
def mounted_tmpfs(where: Path, size: str = "256k") -> Iterator[Path]:
    """Mount a tmpfs of ``size`` at ``where`` (skip where mounting is not permitted)."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, log_home: Path | None = None, log_room: int = 0) -> Path:
    """Fill ``disk`` with one big file, returned (delete it to free space).

    With ``log_home``, its ``logs/decisions.jsonl`` is first padded with blank
    lines (whole lines every reader skips) so that its last page keeps exactly
    ``log_room`` bytes free: 0 means no record fits any more.
    """
    if log_home is not None:
        log = log_home / "logs/decisions.jsonl"
        size = log.stat().st_size if log.exists() else 0
        pad = (PAGE - log_room - size % PAGE) % PAGE
        if size % PAGE == 0 and log_room == 0:
            pad = 0
        if pad:
            append_bytes(log_home, "logs/decisions.jsonl", b" " * (pad - 1) + b"\n")
    ballast = disk / "ballast"
    with ballast.open("wb", buffering=0) as handle:
        while True:
            try:
                if handle.write(b"\0" * PAGE) == 0:
                    break
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
    return ballast
