"""Which container CLI answers here, and the flags this host needs (docs/execution.md#containers).

Detected once per process, never hard-coded: ``auto`` takes the first of
``docker`` and ``podman`` whose engine answers. On a cgroup v1 or hybrid host
podman's default runtime ``crun`` fails ("cgroups in hybrid mode not
supported"), so ``runc`` is chosen when it is installed. Rlimits the runtime
sets must stay within this process's hard limits (no CAP_SYS_RESOURCE here
means it cannot raise them): nofile and nproc are always given, both capped.
"""

from __future__ import annotations

import functools
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Engine", "engine_for"]

_RLIMIT = 1024  # per container, for both nofile and nproc
_NPROC_CEILING = 32768  # what podman's conmon allows whatever the host says


@dataclass(frozen=True, slots=True)
class Engine:
    """A container CLI that answers, with the flags every ``run`` needs on this host."""

    cli: str  # "docker" or "podman"
    binary: str
    run_flags: tuple[str, ...]


def _answers(binary: str, name: str) -> bool:
    probe = (
        [binary, "version"]
        if name == "docker"
        else [binary, "info", "--format", "{{.Host.CgroupsVersion}}"]
    )
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _hybrid_or_v1_cgroups() -> bool:
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").is_file():
        return False  # pure cgroup v2
    unified = root / "unified" / "cgroup.controllers"
    try:
        return bool(unified.read_text().split()) or not unified.exists()
    except OSError:
        return True


def _limit(kind: int, ceiling: int) -> int:
    _soft, hard = resource.getrlimit(kind)
    values = [_RLIMIT, ceiling] + ([] if hard == resource.RLIM_INFINITY else [hard])
    return min(values)


def _flags(name: str) -> tuple[str, ...]:
    nofile = _limit(resource.RLIMIT_NOFILE, 1 << 20)
    nproc = _limit(resource.RLIMIT_NPROC, _NPROC_CEILING)
    flags = ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]
    if name == "podman" and _hybrid_or_v1_cgroups() and shutil.which("runc"):
        flags = ["--runtime", "runc", *flags]
    return tuple(flags)


@functools.cache
def engine_for(setting: str) -> Engine | str:
    """The engine ``terminal.container_cli`` names (``auto | docker | podman``), or why there is none."""
    names = ("docker", "podman") if setting == "auto" else (setting,)
    tried: list[str] = []
    for name in names:
        binary = shutil.which(name)
        if binary is None:
            tried.append(f"{name} is not installed")
            continue
        if not _answers(binary, name):
            tried.append(f"the {name} engine does not answer")
            continue
        return Engine(name, binary, _flags(name))
    return "no container engine: " + "; ".join(tried)
