"""Checks of one simple command against the catalogue (docs/approvals.md#order-of-checks steps 2 and 7).

Each check takes the program basename (lower-cased) and the arguments and returns
the ``Pattern`` the command shows, or None; path helpers say which targets are
system directories, homes or block devices. The argv helpers (``operands`` …) live
in ``shell.parsing._argv`` and are re-exported here. A pure leaf: stdlib, ``shell.parsing._argv`` and
``shell.detection._catalogue`` only.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Sequence

from multiplex.shell.detection._catalogue import (
    ACCOUNT,
    BLOCK_DEVICE_WRITE,
    CRONTAB,
    DELETE_SYSTEM,
    DISK_TOOL,
    FIND_DELETE,
    GIT_HISTORY,
    KILL_ALL,
    MKFS,
    PERMISSIONS,
    POWER,
    PRIVILEGE,
    PROCESS_KILL,
    RECURSIVE_DELETE,
    RUNLEVEL,
    SENSITIVE_WRITE,
    SERVICE_STOP,
    SHRED,
    Pattern,
)
from multiplex.shell.detection._git_checks import git_check
from multiplex.shell.detection._package_checks import INFRA, PACKAGERS, infra_check, package_check
from multiplex.shell.detection._system_checks import SYSTEM_PROGRAMS, system_check
from multiplex.shell.parsing._argv import (
    first_operand,
    git_subcommand,
    has_long,
    operands,
    program,
    short_flags,
)
from multiplex.shell.parsing._getopt import read_options, table

__all__ = [
    "CHMODS",
    "DISK_TOOLS",
    "HARDLINE_PROGRAMS",
    "catastrophic_path",
    "dangerous_check",
    "expand_braces",
    "first_operand",
    "git_subcommand",
    "hardline_check",
    "is_block_device",
    "operands",
    "permission_operands",
    "program",
    "short_flags",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ---- paths ------------------------------------------------------------------------
_SYSTEM_DIRS = _words(
    "/bin /boot /dev /etc /lib /lib32 /lib64 /libx32 /proc /root /sbin /sys /usr /var "
    "/home /usr/bin /usr/sbin /usr/lib /usr/lib32 /usr/lib64 /usr/libexec /usr/share "
    "/usr/include /usr/local /usr/src /var/lib /system /library /applications /users "
    "/private"
)
_WHOLE = ("/", *sorted(_SYSTEM_DIRS))
_HOME_VAR = re.compile(
    r"^(?:\$\{HOME[^}/]*\}|\$HOME\b|\$\{USERPROFILE\}|~[A-Za-z0-9_.-]*|\$\{?OLDPWD\b\}?)"
)  # $OLDPWD: the folder before the last cd, as ~- (any of them)
_GLOB = re.compile(r"[*?\[]")
_TRAILING = ("/*", "/.*", "/**", "/.", "/")


def expand_braces(word: str, limit: int = 64) -> list[str]:
    """Bash brace expansion of ``{a,b}`` groups (not ``${…}``), at most ``limit`` words."""
    pending: list[str] = [word]
    done: list[str] = []
    while pending and len(done) + len(pending) <= limit:
        current = pending.pop()
        start = depth = 0
        group: tuple[int, int] | None = None
        for i, ch in enumerate(current):
            if ch == "{" and (i == 0 or current[i - 1] != "$"):
                if depth == 0:
                    start = i
                depth += 1
            elif ch == "}" and depth:
                depth -= 1
                if depth == 0 and "," in current[start:i]:
                    group = (start, i)
                    break
        if group is None:
            done.append(current)
            continue
        inner, parts, level, last = current[group[0] + 1 : group[1]], [], 0, 0
        for i, ch in enumerate(inner):
            level += ch == "{"
            level -= ch == "}"
            if ch == "," and level == 0:
                parts.append(inner[last:i])
                last = i + 1
        parts.append(inner[last:])
        head, tail = current[: group[0]], current[group[1] + 1 :]
        pending.extend(head + part + tail for part in parts)
    return done + pending


def catastrophic_path(target: str) -> bool:
    """``target`` names /, a system directory, a whole home, or all of their contents."""
    text = target.strip()
    home = _HOME_VAR.match(text)
    if home:
        rest = posixpath.normpath("/" + text[home.end() :].lstrip("/"))
        while rest != "/" and rest.endswith(_TRAILING):
            rest = rest[: rest.rfind("/")] or "/"
        return rest == "/" or rest.startswith("/..")
    if not text.startswith("/"):
        return False
    path = posixpath.normpath(re.sub(r"/+", "/", text)).lower()
    while path != "/" and path.endswith(_TRAILING):
        path = path[: path.rfind("/")] or "/"
    if path in _WHOLE or re.fullmatch(r"/(?:home|users)/[^/]+", path):
        return True
    return bool(_GLOB.search(path)) and any(fnmatch.fnmatchcase(d, path) for d in _WHOLE)


# ---- per-command checks ----------------------------------------------------------

_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_POWER_VERBS = frozenset({"poweroff", "reboot", "halt", "kexec", "soft-reboot"})
_BLOCK = re.compile(
    r"^/dev/(sd[a-z]|nvme\d|vd[a-z]|hd[a-z]|xvd[a-z]|mmcblk\d|disk\d|rdisk\d|dm-\d|md\d|mapper/"
    r"|disk/by-|loop\d|nbd\d|rbd\d|zd\d|bcache\d|sr\d|mem$|kmem$|port$)",
    re.IGNORECASE,
)
_MKFS = frozenset({"mke2fs", "mkdosfs", "mkntfs", "mkexfatfs", "newfs"})


def is_block_device(path: str) -> bool:
    return bool(_BLOCK.match(posixpath.normpath(re.sub(r"/+", "/", path)) if path else ""))


def _kill_targets(args: Sequence[str]) -> list[str]:
    pids: list[str] = []
    signal_given = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return pids + list(args[i + 1 :])
        if arg in ("-s", "-n", "--signal"):
            signal_given = True
            i += 2
            continue
        if arg.startswith("-") and not signal_given and i + 1 < len(args):
            signal_given = True
        else:
            pids.append(arg)
        i += 1
    return pids


# Every program a branch of hardline_check looks at (and mkfs*): any other shows nothing.
HARDLINE_PROGRAMS = frozenset(
    {"rm", "rmdir", "unlink", "srm", "dd", "shred", "wipe", "blkdiscard", "kill", "killall5",
     "systemctl", "loginctl", "init", "telinit", *_MKFS, *_POWER}
)  # fmt: skip


def hardline_check(prog: str, args: Sequence[str]) -> Pattern | None:
    """The hardline pattern one argv shows (write targets are checked in detection)."""
    if prog not in HARDLINE_PROGRAMS and not prog.startswith("mkfs"):
        return None
    if prog in ("rm", "rmdir", "unlink", "srm"):
        for target in operands(args):
            if any(catastrophic_path(t) for t in expand_braces(target)):
                return DELETE_SYSTEM
    elif prog.startswith("mkfs") or prog in _MKFS:
        return MKFS
    elif prog in ("dd", "shred", "wipe", "blkdiscard"):
        devices = [a[3:] for a in args if a.startswith("of=")] if prog == "dd" else operands(args)
        if any(is_block_device(d) for d in devices):
            return BLOCK_DEVICE_WRITE
    elif (prog == "kill" and "-1" in _kill_targets(args)) or prog == "killall5":
        return KILL_ALL
    elif prog in _POWER:
        return POWER
    elif prog in ("systemctl", "loginctl"):
        verb = first_operand(args)
        if verb in _POWER_VERBS:
            return POWER
        ops = operands(args)
        if verb == "isolate" and len(ops) > 1 and ops[1].startswith(("poweroff", "reboot", "halt")):
            return POWER
    elif prog in ("init", "telinit") and first_operand(args) in ("0", "6"):
        return RUNLEVEL
    return None


# Programs that run a command as another user or with more powers: sudo's family, setpriv
# (--reuid=0), capsh (--caps=…), and nsenter into PID 1's namespaces (-t 1: the host's).
_SUDO = frozenset(
    {"sudo", "doas", "su", "pkexec", "runuser", "setpriv", "capsh", "run0", "sudo-rs", "ksu"}
)
# A substitution that finds processes by name, port or file: what it prints, kill ends.
_FOUND_BY_NAME = re.compile(r"(?:\$\(|`)\s*(?:pgrep|pidof|lsof|fuser|ps|pstree|killall)\b")
_DISK = _words(
    "fdisk sfdisk cfdisk gdisk sgdisk parted gparted wipefs mkswap blkdiscard hdparm "
    "cryptsetup pvremove vgremove lvremove mdadm"
)
DISK_TOOLS = _DISK  # what they do to a disk is their danger (disk-tool), not a read of it
_KILLERS = frozenset({"killall", "pkill", "skill", "slay"})
_ACCOUNTS = _words(
    "useradd userdel usermod adduser deluser groupadd groupdel groupmod passwd "
    "chpasswd chsh chage visudo gpasswd"
)


# setfacl's and chcon's options that take a value (their targets are the operands).
_ACL_OPTIONS = table(
    "modify= modify-file= remove= remove-file= set= set-file= type= user= role= range= reference=",
    "m= M= x= X= t= u= r= l=",
)


CHMODS = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl", "chcon"})


_MINUS_MODE = {
    "chmod": re.compile(r"-[rwxXstugoa][rwxXstugoa,+=-]*"),
    "chattr": re.compile(r"-[aAcCdDeFijmPsStTux]+"),
}


def permission_operands(prog: str, args: Sequence[str]) -> tuple[str, list[str]]:
    """The mode (or owner, attributes) and the files of chmod, chown, chgrp, chattr,
    setfacl or chcon (setfacl's and chcon's change is in an option, or chcon's first word)."""
    if prog in ("setfacl", "chcon"):
        parsed = read_options(args, _ACL_OPTIONS)
        context = prog == "chcon" and not parsed.names & {"-t", "-u", "-r", "-l", "--reference"}
        return "", list(parsed.operands[1 if context else 0 :])  # chcon CONTEXT FILE…
    # A mode that looks like an option: chmod -x F, chmod -R -w D, chattr -i F.
    minus = _MINUS_MODE.get(prog)
    ops = [a for a in args if a == "-" or not a.startswith("-") or (minus and minus.fullmatch(a))]
    if "--" in args:  # (after it, every word is an operand)
        at = args.index("--")
        ops = [a for a in ops if a in args[:at]] + list(args[at + 1 :])
    if any(a.startswith("--reference") for a in args):
        return "", ops
    return (ops[0], ops[1:]) if ops else ("", [])


# A mode that sets the setuid bit: 4xxx (5, 6, 7), or +s for u (or all: "+s", "a+s").
# (setgid alone, "g+s" or 2775, is a shared folder's everyday mode.)
_SETUID = re.compile(r"^0?[4-7]\d{3}$|(?:^|,)(?:[go]*[ua][ugoa]*)?\+[rwxXt]*s")


def _chmod(prog: str, args: Sequence[str]) -> Pattern | None:
    """chmod, chown, chgrp, and chattr, setfacl, chcon: the same change of who may do what."""
    mode, targets = permission_operands(prog, args)
    recursive = "R" in short_flags(args) or has_long(args, "recursive")
    wide = prog == "chmod" and bool(re.search(r"777|666|[ao]\+\w*w|\+\w*s|^[24567]\d{3}$", mode))
    wide = wide or (prog == "chattr" and "i" in mode.lstrip("+=") and mode[:1] in "+=")
    if prog == "chmod" and _SETUID.search(mode):
        return PERMISSIONS  # setuid, anywhere: a program that runs as its owner
    system = any(
        catastrophic_path(t) or t.startswith(("/etc", "/usr", "/bin", "/sbin", "/lib", "/boot"))
        for t in targets
    )
    if system and (recursive or wide):
        return PERMISSIONS
    if recursive and wide:
        return PERMISSIONS
    # / or a home itself given away or shut (chmod 000 /, chown nobody ~): not recursive,
    # yet nothing below it can be reached as before
    return PERMISSIONS if any(catastrophic_path(t) for t in targets) else None


# Every program a branch of dangerous_check, package_check, infra_check or system_check looks at.
_JUDGED = frozenset(
    {"rm", "find", "shred", "wipe", "srm", "dd", "systemctl", *CHMODS,
     "service", "rc-service", "launchctl", "kill", "crontab", "git", "bfg", "journalctl", "setcap",
     "machinectl", "systemd-run",
     *_DISK, *_KILLERS, *_ACCOUNTS, *_SUDO, *PACKAGERS, *INFRA, *SYSTEM_PROGRAMS}
)  # fmt: skip


def dangerous_check(prog: str, args: Sequence[str]) -> Pattern | None:
    """The dangerous pattern one argv shows, judged by its program and arguments."""
    if prog.startswith("python") and len(args) > 1 and args[0] == "-m":
        prog, args = args[1].lower(), args[2:]  # python -m pip uninstall …
    if prog not in _JUDGED and not prog.startswith("pip"):
        return None  # no branch below looks at another program (pip* is package_check's)
    if prog == "rm":
        if set(short_flags(args)) & set("rRf") or has_long(args, "recursive", "force"):
            return RECURSIVE_DELETE
    elif prog == "find":
        if "-delete" in args:
            return FIND_DELETE
    elif prog in ("shred", "wipe", "srm"):
        return SHRED
    elif prog in CHMODS:
        return _chmod(prog, args)
    elif prog in _DISK or (prog == "dd" and any(a.startswith("of=") for a in args)):
        return DISK_TOOL
    elif prog == "systemctl":
        verb = first_operand(args)
        # (rescue, emergency: single-user mode, every other service stopped)
        if verb in ("stop", "disable", "mask", "kill", "isolate", "rescue", "emergency"):
            return SERVICE_STOP
    elif prog == "journalctl":  # --vacuum-time=1s: the system's logs deleted
        if any(a.startswith("--vacuum") for a in args):
            return SENSITIVE_WRITE
    elif prog in ("service", "rc-service"):
        ops = [a.lower() for a in operands(args)]
        if len(ops) > 1 and ops[1] in ("stop", "disable"):
            return SERVICE_STOP
    elif prog == "launchctl":
        if first_operand(args) in ("unload", "remove", "bootout", "disable", "kill"):
            return SERVICE_STOP
    elif prog == "kill":
        sig = " ".join(args).upper()
        pids = _kill_targets(args)
        if re.search(r"(^|\s)-(9|KILL|SIGKILL)\b|-[SN] (9|KILL|SIGKILL)\b", sig):
            return PROCESS_KILL
        if any(p == "1" or (p.startswith("-") and p[1:].isdigit()) for p in pids):
            return PROCESS_KILL
        # By name after all (kill $(pgrep -f NAME), $(pidof P), $(lsof -t -i:PORT)), or no
        # pid on the line: xargs hands them over (pgrep NAME | xargs kill).
        named = [p for p in pids if not p.startswith("-") or p[1:].isdigit()]  # not -TERM
        if any(_FOUND_BY_NAME.search(p) for p in named) or not (
            named or {"-l", "-L", "--list", "--table"} & set(args)
        ):
            return PROCESS_KILL
    elif prog in _KILLERS:
        return PROCESS_KILL
    elif prog == "crontab":  # all but a listing installs (from a file or stdin) or removes
        flags = short_flags(args)
        files = [a for i, a in enumerate(args) if a[:1] != "-" and (i == 0 or args[i - 1] != "-u")]
        if set(flags) & set("re") or files or "l" not in flags:
            return CRONTAB
    elif prog == "git":
        return git_check(args)
    elif prog == "bfg":  # the BFG repo-cleaner: every commit rewritten without what it names
        return (
            GIT_HISTORY
            if any(a.startswith(("--delete", "--replace", "--strip")) for a in args)
            else None
        )
    elif prog in _ACCOUNTS:
        return ACCOUNT
    elif prog in _SUDO or (prog == "setcap" and "-v" not in args and "-r" not in args):
        return PRIVILEGE  # setcap cap_setuid+ep FILE: the file gets root's powers
    elif prog == "machinectl" and first_operand(args) in ("shell", "login"):
        return PRIVILEGE  # a shell or login on a machine, root's unless a user is named
    elif prog == "systemd-run" and "--user" not in args:
        return PRIVILEGE  # run by the system's manager: as root, or as the --uid it names
    return package_check(prog, args) or infra_check(prog, args) or system_check(prog, args)
