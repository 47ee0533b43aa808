"""Containers started with the host's powers: ``privileged-container`` (docs/security.md#named-patterns).

A container is a wall only while it keeps its own namespaces, capabilities, seccomp
and LSM profile: ``--privileged``, a host namespace (``--pid=host``, also
``--network=host``, which reaches the host's loopback services), a capability that
escapes (``SYS_ADMIN``, ``SYS_PTRACE``, ``SYS_MODULE``, ``DAC_READ_SEARCH`` …), a
disabled seccomp, AppArmor or SELinux profile, a raw device, or a mount of ``/``, a
system folder, a home or a container socket hand the host over. A mount of a
credential store reads it (``secret-read``). ``kubectl run --privileged``, an
override that asks for the host's namespaces and ``kubectl debug node/…`` do the same
on a cluster node. A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from multiplex.shell.detection._catalogue import PRIVILEGED_CONTAINER, SECRET_READ, Finding
from multiplex.shell.detection._command_checks import catastrophic_path, is_block_device
from multiplex.shell.detection.paths._secret_paths import is_secret_path, resolved
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.detection.paths._writes import all_commands, evidence
from multiplex.shell.parsing._argv import option_values
from multiplex.shell.parsing._parsed import ParsedLine

__all__ = ["each_privileged_container", "find_privileged_container"]

_CONTAINER_CLI = frozenset({"docker", "podman", "nerdctl", "finch", "ctr"})
_SOCKETS = ("docker.sock", "podman.sock", "containerd.sock", "crio.sock")
_HOST_NS = re.compile(r"^--(?:pid|ipc|uts|userns|cgroupns|net|network)(?:=|$)")
_ESCAPING_CAPS = frozenset(
    {"ALL", "SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH", "DAC_OVERRIDE",
     "SYS_RAWIO", "BPF", "SYS_BOOT", "MAC_ADMIN", "MAC_OVERRIDE"}
)  # fmt: skip
_UNCONFINED = ("seccomp=unconfined", "apparmor=unconfined", "label=disable",
               "systempaths=unconfined", "seccomp:unconfined", "apparmor:unconfined")  # fmt: skip
# Folders holding an engine's socket or its containers' files: mounted, the host's root.
_HOST_RUNTIME = frozenset({"/run", "/var/run", "/var/lib/docker", "/var/lib/containers",
                           "/run/containerd", "/var/lib/containerd"})  # fmt: skip
_HOST_POWERS = re.compile(r'"(?:hostPID|hostNetwork|hostIPC|privileged)"\s*:\s*true')


def _value(args: Sequence[str], i: int, names: tuple[str, ...]) -> str | None:
    """The value of ``args[i]`` if it is one of ``names`` (``--x V``, ``--x=V``, ``-vV``)."""
    arg = args[i]
    if arg in names:
        return args[i + 1] if i + 1 < len(args) else None
    for name in names:
        if arg.startswith(name + "=") or (len(name) == 2 and arg.startswith(name) and len(arg) > 2):
            return arg[len(name) + 1 :] if arg.startswith(name + "=") else arg[2:]
    return None


def _mount_source(arg: str) -> str | None:
    if arg.startswith("type=") or "source=" in arg or "src=" in arg:
        fields = dict(f.split("=", 1) for f in arg.split(",") if "=" in f)
        return fields.get("source") or fields.get("src")
    return arg.split(":", 1)[0] if ":" in arg else None


def _host_given(args: Sequence[str], i: int, place: Place) -> str | None:
    """The pattern ``args[i]`` (with its value) makes the container a way into the host."""
    arg = args[i]
    if arg == "--privileged" or arg.lower() in ("--privileged=true", "--privileged=1"):
        return PRIVILEGED_CONTAINER.name
    rootfs = _value(args, i, ("--rootfs",))  # podman run --rootfs /: the host's root as its own
    if rootfs is not None and (
        rootfs.split(":", 1)[0].rstrip("/") == "" or catastrophic_path(rootfs)
    ):
        return PRIVILEGED_CONTAINER.name
    if _HOST_NS.match(arg) and "host" in (arg + " ".join(args[i + 1 : i + 2])):
        return PRIVILEGED_CONTAINER.name
    if arg in ("--net-host", "--privileged-without-host-devices") or arg.startswith("--with-ns"):
        return PRIVILEGED_CONTAINER.name  # containerd's ctr: the host's network, a host namespace
    cap = _value(args, i, ("--cap-add",))
    if cap is not None and cap.upper().removeprefix("CAP_") in _ESCAPING_CAPS:
        return PRIVILEGED_CONTAINER.name
    option = _value(args, i, ("--security-opt",))
    if option is not None and option.lower().startswith(_UNCONFINED):
        return PRIVILEGED_CONTAINER.name
    device = _value(args, i, ("--device",))
    if device is not None and is_block_device(device.split(":", 1)[0]):
        return PRIVILEGED_CONTAINER.name
    rule = _value(args, i, ("--device-cgroup-rule",))  # 'a *:* rwm', 'b 8:* rwm': the disks
    if rule is not None and rule.strip("'\" ").startswith(("a", "b")):
        return PRIVILEGED_CONTAINER.name
    mount = _value(args, i, ("-v", "--volume", "--mount"))
    source = _mount_source(mount) if mount else None
    if source is None:
        return None
    paths = resolved(source, place) or [source]
    if any(
        p.endswith(_SOCKETS)
        or p in ("~", "/")
        or p.rstrip("/") in _HOST_RUNTIME
        or catastrophic_path(p)
        for p in paths
    ):
        return PRIVILEGED_CONTAINER.name
    return SECRET_READ.name if any(is_secret_path(p) for p in paths) else None


def _kubectl(args: Sequence[str]) -> bool:
    """``kubectl run --privileged``, an override asking for host namespaces, ``debug node/``."""
    if list(args[:1]) == ["debug"]:  # a node's host, or a pod's with every power (sysadmin)
        profile = option_values(args, ("--profile",))
        return any(a.startswith("node/") for a in args[1:]) or "sysadmin" in profile
    if not args or args[0] not in ("run", "create"):
        return False
    return (
        "--privileged" in args
        or "--privileged=true" in args
        or any(_HOST_POWERS.search(a) for a in args if "host" in a or "privileged" in a)
    )


_PATTERNS = {PRIVILEGED_CONTAINER.name: PRIVILEGED_CONTAINER, SECRET_READ.name: SECRET_READ}
# lxc|incus config set C security.privileged|security.nesting true, raw.lxc, a host disk.
_LXC_POWERS = re.compile(
    r"^(?:security\.(?:privileged|nesting)|raw\.(?:lxc|idmap|apparmor|seccomp))$"
)


def _machine(prog: str, args: Sequence[str]) -> bool:
    """``systemd-nspawn`` of the host's root (or with it bound in), an lxc/incus container
    given the host's powers (``security.privileged``, ``raw.lxc``)."""
    if prog == "systemd-nspawn":
        roots = [_value(args, i, ("-D", "--directory")) for i in range(len(args))]
        binds = [_value(args, i, ("--bind", "--bind-ro")) for i in range(len(args))]
        sources = [r for r in roots if r] + [b.split(":", 1)[0] for b in binds if b]
        return any(catastrophic_path(s) for s in sources)
    if args[:2] in (("config", "set"),) and len(args) >= 4:
        key, eq, value = args[3].partition("=")  # incus config set C key=value
        value = value if eq else (args[4] if len(args) > 4 else "")
        return bool(_LXC_POWERS.match(key)) and value != "false"
    return False


_HTTP_CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "xhs"})
# A container engine's API over TCP (docker's 2375/2376) or a kubelet's (10250).
_ENGINE_URL = re.compile(r"://[^/\s]*:(?:2375|2376|10250)(?:/|$)")
# What such an API does that gives the host away: a container made (any mounts, any
# powers), a command run in one, an image pulled or built to run.
_ENGINE_ACTS = re.compile(
    r"/(?:containers/create|containers/[^/\s]+/(?:exec|start|attach)|exec/|run/|attach/"
    r"|images/create|build|services/create|pods/create|libpod/)"
)


def _engine_api(prog: str, args: Sequence[str]) -> bool:
    """``curl --unix-socket /var/run/docker.sock http://d/containers/create -d …``, the
    same over ``tcp://HOST:2375``, a kubelet's ``/run/``: the engine's CLI without it."""
    if prog not in _HTTP_CLIENTS:
        return False
    sockets = option_values(args, ("--unix-socket", "--abstract-unix-socket"))
    local = any(s in v for v in sockets for s in _SOCKETS)
    urls = [a for a in args if "://" in a]
    if not local and not any(_ENGINE_URL.search(u) for u in urls):
        return False
    return any(_ENGINE_ACTS.search(u) for u in urls)


def each_privileged_container(parsed: ParsedLine, place: Place) -> Iterator[Finding]:
    """Each container started with the host's powers (or a credential store mounted)."""
    for cmd in all_commands(parsed):
        if not cmd.argv:
            continue
        prog, args = cmd.program, cmd.argv[1:]
        if _engine_api(prog, args):
            yield Finding(PRIVILEGED_CONTAINER, evidence(cmd), cmd.text)
        if prog in ("kubectl", "oc") and _kubectl(args):
            yield Finding(PRIVILEGED_CONTAINER, evidence(cmd), cmd.text)
        if prog in ("systemd-nspawn", "lxc", "incus") and _machine(prog, args):
            yield Finding(PRIVILEGED_CONTAINER, evidence(cmd), cmd.text)
        if prog not in _CONTAINER_CLI:
            continue
        for i in range(len(args)):
            found = _host_given(args, i, place)
            if found is not None:
                yield Finding(_PATTERNS[found], evidence(cmd), cmd.text)


def find_privileged_container(parsed: ParsedLine, place: Place) -> Finding | None:
    """The first container started with the host's powers, or None."""
    return next(each_privileged_container(parsed, place), None)
