"""The machine's own firewall, network, settings and storage, judged by program and
arguments (docs/security.md#named-patterns).

Families of ``dangerous_check`` (``shell.detection._command_checks``): the firewall
flushed or closed to everything (``firewall-change``), the network taken down or its
default route removed (``network-change``), the kernel's parameters, the clock or the
host's name changed (``system-setting``), a storage pool or volume destroyed
(``disk-tool``) and a way into the host's namespaces (``privilege-escalation``). A pure
leaf: stdlib, the catalogue and ``shell.parsing._argv``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from multiplex.shell.detection._catalogue import (
    DISK_TOOL,
    FIREWALL,
    NETWORK_CHANGE,
    PERMISSIONS,
    PRIVILEGE,
    PROCESS_KILL,
    SERVICE_STOP,
    SYSTEM_SETTING,
    Pattern,
)
from multiplex.shell.parsing._argv import has_long, operands, option_values

__all__ = ["SYSTEM_PROGRAMS", "system_check"]

_FIREWALLS = frozenset({"iptables", "ip6tables", "nft", "ufw", "firewall-cmd"})
# Storage pools' and volumes' verbs that destroy what they hold (their other verbs are reads).
_POOLS = {"zpool": (("destroy",), ("labelclear",)), "zfs": (("destroy",),),
          "btrfs": (("subvolume", "delete"), ("device", "delete"), ("device", "remove")),
          "lvm": (("lvremove",), ("vgremove",), ("pvremove",))}  # fmt: skip
# Network tools: the words that take an interface down or remove routes and addresses.
_NETWORK = frozenset(
    {"ip", "ifconfig", "ifdown", "nmcli", "route", "networkctl", "wg-quick", "tailscale"}
)
# What narrows an iptables rule to some traffic: without one, -j DROP drops everything.
_NARROWING = frozenset(
    {"-s", "--source", "-d", "--destination", "-p", "--protocol", "-i", "--in-interface",
     "-o", "--out-interface", "--dport", "--sport", "-m", "--match"}
)  # fmt: skip
_CLOSED = frozenset({"drop", "reject"})
_SETTINGS = frozenset({"sysctl", "date", "timedatectl", "hwclock", "hostnamectl", "hostname",
                       "swapoff", *("setenforce", "semanage", "auditctl", "apparmor_parser"),
                       *("aa-disable", "aa-complain", "aa-teardown")})  # fmt: skip
# The kernel's own guards switched off: SELinux, AppArmor, the audit log.
_GUARDS_OFF = frozenset({"aa-disable", "aa-complain", "aa-teardown", "swapoff"})

# Process supervisors' verbs that stop what they run (runit's sv, supervisord, pm2).
_SUPERVISORS = {"sv": ("stop", "down", "kill", "exit", "force-stop", "force-shutdown"),
                "supervisorctl": ("stop", "shutdown", "remove"),
                "pm2": ("stop", "delete", "kill", "del")}  # fmt: skip

# Code loaded into the running kernel (or a new kernel booted): root's powers and more.
_KERNEL = frozenset({"insmod", "modprobe", "kexec", "bpftool"})
# bpftool's verbs that load a program into the kernel or attach one (its reads are not).
_BPF_LOADS = (("prog", "load"), ("prog", "loadall"), ("prog", "attach"), ("net", "attach"),
              ("cgroup", "attach"), ("struct_ops", "register"), ("link", "pin"))  # fmt: skip
_MODPROBE_READS = frozenset({"-n", "--dry-run", "-c", "--showconfig", "--show-depends", "-D",
                             "--show-modversions", "--dump-modversions", "-h", "--help"})  # fmt: skip
# Groups whose members are root in all but name: the container engines', the disks'.
_ROOT_GROUPS = frozenset({"root", "docker", "lxd", "incus-admin", "libvirt", "disk", "wheel",
                          "sudo", "admin", "shadow", "kvm", "podman"})  # fmt: skip
SYSTEM_PROGRAMS = frozenset(
    {*_FIREWALLS, *_POOLS, *_NETWORK, *_SETTINGS, *_SUPERVISORS, *_KERNEL, "nsenter", "fuser",
     "newgrp", "sg", "install", "loginctl"}
)  # fmt: skip


def system_check(prog: str, args: Sequence[str]) -> Pattern | None:
    """The pattern one argv of :data:`SYSTEM_PROGRAMS` shows, or None."""
    if prog in _FIREWALLS:
        return FIREWALL if _opens_or_closes(prog, args) else None
    words = [a.lower() for a in operands(args)]
    if prog in _POOLS:  # zpool destroy tank, zfs destroy -r tank/data, btrfs subvolume delete
        found = tuple(words)
        return DISK_TOOL if any(found[: len(verb)] == verb for verb in _POOLS[prog]) else None
    if prog in _NETWORK:
        return NETWORK_CHANGE if _takes_down(prog, words) else None
    if prog in _SETTINGS:
        return SYSTEM_SETTING if _sets(prog, args, words) else None
    if prog == "nsenter" and _enters_init(args):
        return PRIVILEGE
    if prog == "bpftool":  # bpftool prog load x.o /sys/fs/bpf/x: code run in the kernel
        return PRIVILEGE if tuple(words[:2]) in _BPF_LOADS else None
    if prog in _KERNEL:  # insmod x.ko, modprobe evil, kexec -l: not modprobe -n, --show-depends
        return None if prog == "modprobe" and _MODPROBE_READS & set(args) else PRIVILEGE
    if prog in ("newgrp", "sg") and words[:1] and words[0] in _ROOT_GROUPS:
        return PRIVILEGE  # sg docker -c CMD: the docker socket's group
    if prog == "install" and any(_SETUID_MODE.search(m) for m in _install_modes(args)):
        return PERMISSIONS  # install -m 4755 /bin/sh /tmp/sh: a setuid copy, as chmod 4755
    if prog in _SUPERVISORS:
        return SERVICE_STOP if words[:1] and words[0] in _SUPERVISORS[prog] else None
    if prog == "fuser":  # fuser -k PORT/FILE: every process using it killed
        return PROCESS_KILL if any(a.startswith("-") and "k" in a[1:] for a in args) else None
    if prog == "loginctl" and words[:1] and words[0].startswith(("terminate-", "kill-")):
        return PROCESS_KILL  # loginctl terminate-user NAME: every process of the user's
    if prog in ("docker", "podman") and words[:1] in (["stop"], ["kill"]):
        # docker stop $(docker ps -q): every running container
        return SERVICE_STOP if any("$(" in a or "`" in a for a in args) else None
    if prog in ("kubectl", "oc") and words[:1] == ["scale"]:  # --replicas=0: the workload stops
        return SERVICE_STOP if "0" in option_values(args, ("--replicas",)) else None
    if prog in ("kubectl", "oc") and words[:1] == ["drain"]:  # every pod of the node evicted
        return SERVICE_STOP
    return None


# A mode with the setuid or setgid bit of the owner: 4755, u+s (chmod's _SETUID's sibling).
_SETUID_MODE = re.compile(r"^0?[4-7]\d{3}$|(?:^|,)(?:[go]*[ua][ugoa]*)?\+[rwxXt]*s")


def _install_modes(args: Sequence[str]) -> list[str]:
    """install's ``-m MODE``, ``-mMODE``, ``--mode=MODE``."""
    modes = option_values(args, ("-m", "--mode"))
    return modes + [a[2:] for a in args if a.startswith("-m") and len(a) > 2 and a[2] != "-"]


def _opens_or_closes(prog: str, args: Sequence[str]) -> bool:
    """Flushed, disabled or reset; or every packet of a chain dropped: a default policy
    of DROP (``iptables -P INPUT DROP``) or a rule that drops all (``-A INPUT -j DROP``)."""
    words = [a.lower() for a in args]
    if set(words) & {"-f", "-x", "flush", "disable", "reset", "--panic-on"} or has_long(
        words, "flush", "delete-chain"
    ):
        return True
    if prog not in ("iptables", "ip6tables"):
        return False
    if "-P" in args or "--policy" in args:  # -P CHAIN TARGET (-p is the protocol)
        return bool(_CLOSED & set(words))
    jumps = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-j", "--jump")]
    adds = {"-a", "--append", "-i", "--insert"} & set(words)
    return bool(adds) and bool(_CLOSED & set(jumps)) and not (_NARROWING & set(args))


def _takes_down(prog: str, words: list[str]) -> bool:
    """``ip link set DEV down``, ``ip route del default``, ``ip addr flush``, ``ifconfig DEV
    down``, ``ifdown``, ``nmcli networking off``, ``route del default``."""
    if prog == "ifdown":
        return True
    if prog == "ifconfig":
        return "down" in words[1:]
    if prog == "route":
        return words[:1] == ["del"] and "default" in words
    if prog in ("networkctl", "wg-quick"):  # an interface (or a VPN's) taken down
        return words[:1] == ["down"]
    if prog == "tailscale":  # off the tailnet: the way in to this machine may be that one
        return words[:1] in (["down"], ["logout"])
    if prog == "nmcli":
        if words[:1] in (["connection"], ["con"], ["c"]) and words[1:2] == ["down"]:
            return True
        off = words[:1] in (["networking"], ["n"], ["radio"], ["r"]) and "off" in words[1:3]
        return off or words[:2] in (
            ["device", "disconnect"],
            ["dev", "disconnect"],
            ["d", "disconnect"],
        )
    # ip's objects and verbs may be abbreviated: l(ink), r(oute), a(ddr); del(ete), f(lush)
    obj, verb = [*words, "", ""][:2]
    if "link".startswith(obj) and obj and verb.startswith("s"):
        return "down" in words[2:]
    if "route".startswith(obj) and obj and verb.startswith(("del", "f")):
        return "default" in words or (verb.startswith("f") and "cache" not in words)
    return "address".startswith(obj) and obj != "" and verb.startswith("f")


def _sets(prog: str, args: Sequence[str], words: list[str]) -> bool:
    """``sysctl -w K=V`` (or ``sysctl K=V``, ``-p FILE``), ``date -s``, ``timedatectl set-…``,
    ``hwclock --set``/``-w``, ``hostnamectl set-hostname``, ``hostname NAME``."""
    if prog == "sysctl":
        return any(a in ("-w", "--write", "-p", "--load", "--system") for a in args) or any(
            "=" in w for w in words
        )
    if prog == "date":
        return any(a in ("-s", "--set") or a.startswith(("--set=", "-s")) for a in args)
    if prog == "timedatectl":
        return words[:1] in (["set-time"], ["set-timezone"], ["set-ntp"], ["set-local-rtc"])
    if prog == "hwclock":
        return any(a in ("--set", "-w", "--systohc", "-s", "--hctosys") for a in args)
    if prog == "hostnamectl":
        return words[:1] in (["set-hostname"], ["hostname"]) and len(words) > 1
    if prog in _GUARDS_OFF:
        return True
    if prog == "setenforce":  # SELinux permissive: its policy no longer enforced
        return words[:1] in (["0"], ["permissive"])
    if prog == "semanage":  # semanage permissive -a DOMAIN
        return words[:1] == ["permissive"] and ("-a" in args or "--add" in args)
    if prog == "apparmor_parser":  # -R: a profile unloaded
        return "-R" in args or "--remove" in args
    if prog == "auditctl":  # -D: every rule deleted; -e 0: auditing off
        return "-D" in args or any(a == "-e" and b == "0" for a, b in itertools.pairwise(args))
    return prog == "hostname" and bool(words) and not args[0].startswith("-")


def _enters_init(args: Sequence[str]) -> bool:
    """``nsenter -t 1``, ``--target=1``, ``-t1``: into the host's namespaces."""
    for i, arg in enumerate(args):
        value = arg[2:] if arg.startswith("-t") and len(arg) > 2 else None
        if arg in ("-t", "--target") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--target="):
            value = arg.partition("=")[2]
        if value == "1":
            return True
    return False
