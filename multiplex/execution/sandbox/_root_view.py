"""What of the host a sandbox's empty root shows (docs/execution.md#the-sandbox).

bubblewrap starts every sandbox on an empty tmpfs root; nothing of the host is
there unless it is bound in. ``system_binds`` is the system's runtime,
read-only: ``/usr`` and the ``/bin``, ``/sbin`` and ``/lib*`` folders (or the
links Debian makes of them), and ``/etc`` without its secrets. Never the
supervisor's HOME, ``/root``, ``/home``, ``/srv``, ``/var``, ``/opt``, ``/mnt``,
the folder of ``multiplex.yaml`` or anything an operator did not name.

``/etc`` is shown without every entry that is not world-readable (``shadow``,
``gshadow``, ssh host keys, ``ssl/private``, …: the sandbox's user may be the
files' owner, root mapped into its user namespace, so their mode alone would not
keep them) and without a fixed list of secrets whatever their mode. Both are
found once per process: ``/etc`` is the host's, not an agent's, to change.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import stat
import sys
from pathlib import Path

__all__ = [
    "etc_blanked",
    "etc_secret",
    "public",
    "runtime_binds",
    "runtime_paths",
    "system_binds",
    "system_roots",
]

# Top-level folders of the system's runtime, shown read-only when they exist.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Secrets of /etc hidden whatever their mode (a host that made one world-readable
# still keeps it from commands). Globs are matched against names in that folder.
_ETC_SECRETS = (
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "doas.conf",
    ".pwd.lock",
    "krb5.keytab",
    "ssl/private",
    "pki/tls/private",
    "security/opasswd",
    "ssh/ssh_host_*",
    "ssh/sshd_config.d",
    "wireguard",
    "NetworkManager/system-connections",
    "ppp/chap-secrets",
    "ppp/pap-secrets",
    "openvpn",
    "libvirt/secrets",
    "containers/auth.json",
    "docker/key.json",
)
ETC_WALK_LIMIT = 20000  # entries; an /etc past this is shown only minus the fixed list


def public(mode: int) -> bool:
    """Whether an entry of this mode may be shown: readable (a folder: searchable) by all."""
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


@functools.cache
def _etc_hidden() -> tuple[tuple[str, bool], ...]:
    """Entries of /etc a command never sees: (path, is a folder), outermost first."""
    etc = Path("/etc")
    hidden: dict[str, bool] = {}
    for pattern in _ETC_SECRETS:
        for found in etc.glob(pattern):
            try:
                mode = os.lstat(found).st_mode
            except OSError:
                continue
            if not stat.S_ISLNK(mode):
                hidden[str(found)] = stat.S_ISDIR(mode)
    seen = 0
    for top, dirs, files in os.walk(etc, followlinks=False):
        for name in [*dirs, *files]:
            seen += 1
            entry = os.path.join(top, name)
            try:
                mode = os.lstat(entry).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode) or public(mode):
                continue
            hidden[entry] = stat.S_ISDIR(mode)
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in hidden]
        if seen > ETC_WALK_LIMIT:
            break
    ordered = sorted(hidden.items(), key=lambda item: (item[0].count("/"), item[0]))
    kept: list[tuple[str, bool]] = []
    for entry, is_dir in ordered:
        if not any(entry.startswith(outer + "/") for outer, outer_dir in kept if outer_dir):
            kept.append((entry, is_dir))
    return tuple(kept)


def etc_secret(relative: str) -> bool:
    """Whether ``relative`` (a path inside /etc) is on the fixed list of secrets."""
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in _ETC_SECRETS)


@functools.cache
def runtime_binds() -> tuple[str, ...]:
    """bwrap arguments showing ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` around it."""
    argv: list[str] = []
    for top in _SYSTEM:
        try:
            mode = os.lstat(top).st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            argv += ["--symlink", os.readlink(top), top]
        elif stat.S_ISDIR(mode):
            argv += ["--ro-bind", top, top]
    return tuple(argv)


@functools.cache
def etc_blanked() -> tuple[str, ...]:
    """bwrap arguments showing the live /etc read-only with a blank over each secret
    (what a sandbox gets while the copy of ``_etc_mirror`` is not in step)."""
    if not os.path.isdir("/etc"):
        return ()
    argv = ["--ro-bind", "/etc", "/etc"]
    for path, is_dir in _etc_hidden():
        argv += ["--tmpfs", path] if is_dir else ["--ro-bind", "/dev/null", path]
    return tuple(argv)


@functools.cache
def system_binds() -> tuple[str, ...]:
    """bwrap arguments showing the system's runtime read-only on the empty root."""
    return runtime_binds() + etc_blanked()


@functools.cache
def system_roots() -> tuple[Path, ...]:
    """The host folders ``system_binds`` shows (each at its own path)."""
    binds = system_binds()
    return tuple(
        Path(binds[i + 1])
        for i, arg in enumerate(binds)
        if arg == "--ro-bind" and binds[i + 1] == binds[i + 2]
    )


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _under(path: Path, roots: tuple[str, ...]) -> bool:
    return any(path == Path(root) or path.is_relative_to(root) for root in roots)


@functools.cache
def runtime_paths() -> tuple[Path, ...]:
    """The interpreter and this package, shown read-only where the system view lacks them.

    A kernel runs this process's Python with ``multiplex`` importable: a virtual
    environment or a checkout outside ``/usr`` (``/root/.pyenv``, ``/opt``, a CI
    clone under ``/tmp``) is bound at its real path, and nothing else of the
    folders around it.
    """
    candidates = {
        _real(Path(sys.prefix)),
        _real(Path(sys.base_prefix)),
        _real(Path(sys.executable)).parent.parent,
        _real(Path(__file__)).parents[2],  # the multiplex package
    }
    shown = tuple(p for p in _SYSTEM if os.path.isdir(p) and not os.path.islink(p))
    paths = sorted(p for p in candidates if p.is_dir() and not _under(p, shown))
    # One bind for a folder inside another one bound already.
    return tuple(p for p in paths if not any(p != o and p.is_relative_to(o) for o in paths))
