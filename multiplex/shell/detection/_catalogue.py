"""The named patterns of docs/approvals.md#order-of-checks: hardline (step 2) and dangerous (step 7).

Each ``Pattern`` has a stable ``name`` and a sentence an operator reads. The
check functions here look at ONE simple command's argv (program matched by
basename, ignoring case) and return the pattern it shows, if any; line-level
checks (fork bombs, script payloads, protected files) live in ``detection``.
A pure leaf: stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ACCOUNT",
    "BLOCK_DEVICE_WRITE",
    "CLOUD_METADATA",
    "COMMAND_VARIABLE",
    "CRONTAB",
    "DANGEROUS",
    "DELETE_SYSTEM",
    "DISK_TOOL",
    "DOWNLOAD_EXEC",
    "DYNAMIC_PROGRAM",
    "DYNAMIC_TARGET",
    "EXFILTRATION",
    "FIND_DELETE",
    "FIREWALL",
    "FORK_BOMB",
    "GIT_HISTORY",
    "HARDLINE",
    "INFRA_DESTROY",
    "KILL_ALL",
    "MKFS",
    "NETWORK_REDIRECT",
    "OTHER_HOME",
    "OVER_LIMIT",
    "PACKAGE_REMOVAL",
    "PERMISSIONS",
    "PERSISTENCE",
    "PIPE_TO_SHELL",
    "POWER",
    "PRIVILEGE",
    "PRIVILEGED_CONTAINER",
    "PROCESS_KILL",
    "PROTECTED_FILE",
    "RECURSIVE_DELETE",
    "REVERSE_SHELL",
    "RUNLEVEL",
    "SCRIPT_DESTRUCTIVE",
    "SCRIPT_EXEC",
    "SECRET_READ",
    "SENSITIVE_WRITE",
    "SERVICE_STOP",
    "SHRED",
    "SQL_DESTRUCTIVE",
    "SYSRQ",
    "SYSTEM_TARGET",
    "UNPARSEABLE",
    "Finding",
    "Pattern",
]


@dataclass(frozen=True, slots=True)
class Pattern:
    """A named kind of command the gate treats specially."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class Finding:
    """A pattern found in a line, with the argv (joined) or text that showed it.

    ``segment`` is the source text of the simple command it was found in; empty when
    ``evidence`` is already source text (a script payload, a function body).
    """

    pattern: Pattern
    evidence: str
    segment: str = ""

    @property
    def where(self) -> str:
        """The part of the line the pattern came from (docs/approvals.md#what-a-prompt-shows)."""
        return self.segment or self.evidence


def _p(name: str, description: str) -> Pattern:
    return Pattern(name, description)


# docs/approvals.md#order-of-checks step 2: blocked, nothing bypasses these.
DELETE_SYSTEM = _p("delete-system", "Deletes /, a system directory or a home directory.")
MKFS = _p("mkfs", "Creates a filesystem, erasing the device it is pointed at.")
BLOCK_DEVICE_WRITE = _p("block-device-write", "Writes raw data onto a disk or memory device.")
FORK_BOMB = _p("fork-bomb", "Spawns processes without end until the machine stops responding.")
KILL_ALL = _p("kill-all", "Signals every process the user can reach (pid -1).")
POWER = _p("power-off", "Shuts down, halts or reboots the machine.")
RUNLEVEL = _p("runlevel-change", "Switches the init runlevel to halt (0) or reboot (6).")
SYSTEM_TARGET = _p(
    "system-target",
    "Moves, empties or recursively re-owns /, a system directory, a home or a folder above the cwd.",
)
SYSRQ = _p(
    "sysrq-trigger",
    "Writes to /proc/sysrq-trigger: the kernel crashes, reboots or freezes at once.",
)
OTHER_HOME = _p(
    "other-profile-home",
    "Touches another profile's home, or the profiles folder above this profile's home.",
)
HARDLINE: tuple[Pattern, ...] = (
    DELETE_SYSTEM,
    SYSTEM_TARGET,
    SYSRQ,
    OTHER_HOME,
    MKFS,
    BLOCK_DEVICE_WRITE,
    FORK_BOMB,
    KILL_ALL,
    POWER,
    RUNLEVEL,
)

# docs/approvals.md#order-of-checks step 7: these ask (unless an allow rule covers every simple command).
UNPARSEABLE = _p("unparseable", "The line does not parse as shell, so nothing can be vouched for.")
OVER_LIMIT = _p("over-limit", "The line is too long or nested too deeply to check.")
RECURSIVE_DELETE = _p("recursive-delete", "Deletes recursively or by force (rm -r/-f).")
FIND_DELETE = _p("find-delete", "Deletes every file a find expression matches.")
SHRED = _p("shred", "Overwrites files so they cannot be recovered.")
PERMISSIONS = _p(
    "system-permissions",
    "Changes owner, mode, attributes, ACLs or labels recursively, world-writable, setuid or"
    " immutable, on system paths or /.",
)
DISK_TOOL = _p("disk-tool", "Partitions, wipes or writes a disk (fdisk, parted, wipefs, dd of=).")
SQL_DESTRUCTIVE = _p(
    "sql-destructive",
    "Drops or truncates tables or collections, or deletes/updates rows without WHERE.",
)
SERVICE_STOP = _p("service-stop", "Stops, disables or masks a system service.")
PROCESS_KILL = _p("process-kill", "Kills processes by name, with SIGKILL, or a process group.")
DOWNLOAD_EXEC = _p("download-exec", "Runs code downloaded from the network in a shell/interpreter.")
PIPE_TO_SHELL = _p("pipe-to-shell", "Pipes text into a shell or interpreter that runs it.")
SENSITIVE_WRITE = _p(
    "sensitive-write", "Writes to ~/.ssh, shell start-up files, /etc, sudoers or system dirs."
)
CRONTAB = _p("crontab-change", "Replaces, edits or removes the user's crontab.")
GIT_HISTORY = _p(
    "git-history-rewrite",
    "Force-pushes, deletes branches or rewrites/discards git history (reset --hard, clean -f).",
)
CLOUD_METADATA = _p("cloud-metadata", "Reaches a cloud instance metadata service (credentials).")
PACKAGE_REMOVAL = _p("package-removal", "Uninstalls system or global packages.")
INFRA_DESTROY = _p(
    "infra-destroy",
    "Deletes cluster, container, cloud or database resources, or published packages "
    "(kubectl delete, prune, dropdb, npm unpublish).",
)
FIREWALL = _p(
    "firewall-change",
    "Flushes or disables the firewall, or drops everything (iptables -P INPUT DROP).",
)
NETWORK_CHANGE = _p(
    "network-change",
    "Takes the machine's network down or removes its default route (ip link set … down).",
)
SYSTEM_SETTING = _p(
    "system-setting",
    "Changes the kernel's parameters, the clock or the host's name (sysctl -w, date -s).",
)
ACCOUNT = _p("account-change", "Creates, deletes or modifies user accounts or passwords.")
PRIVILEGE = _p(
    "privilege-escalation",
    "Runs a command as another user or with more powers (sudo, su, doas, setpriv, nsenter -t 1).",
)
DYNAMIC_PROGRAM = _p("dynamic-program", "The program name is computed at run time ($VAR, $(…)).")
SCRIPT_DESTRUCTIVE = _p(
    "script-destructive", "Inline script code deletes files or runs dangerous shell commands."
)
DYNAMIC_TARGET = _p(
    "dynamic-target",
    "A destructive command's target is computed at run time ($VAR, $(…), globs): it may be anything.",
)
SCRIPT_EXEC = _p(
    "script-exec",
    "Inline interpreter code, or a program told to by its options or input (sed e, vim +!, gdb -ex shell, ssh -o ProxyCommand, make --eval), runs other programs.",
)
COMMAND_VARIABLE = _p(
    "command-variable",
    "Sets a variable that makes a program load or run other code (LD_PRELOAD, GIT_PAGER, BASH_ENV, PATH=.).",
)
NETWORK_REDIRECT = _p(
    "network-redirect", "Redirects to /dev/tcp or /dev/udp: the shell itself talks to the network."
)
REVERSE_SHELL = _p(
    "reverse-shell",
    "Binds a shell to a network socket (nc -e, socat exec:, bash -i >& /dev/tcp): a remote party gets a shell.",
)
EXFILTRATION = _p(
    "exfiltration",
    "Sends the home folder or credential files to the network (piped to nc/curl, curl -d @, scp, rsync).",
)
SECRET_READ = _p(
    "secret-read",
    "Reads a private key or credential store (~/.ssh/id_*, ~/.aws, ~/.kube/config, /etc/shadow, .env).",
)
PERSISTENCE = _p(
    "persistence",
    "Installs something that runs later by itself: git hooks, autostart, crontab, systemd units, "
    "shell start-up files, git config of pager/hooksPath/aliases.",
)
PRIVILEGED_CONTAINER = _p(
    "privileged-container",
    "Starts a container with host privileges (--privileged, host pid/net) or / or the docker socket mounted.",
)
PROTECTED_FILE = _p("protected-file", "Writes to a protected file (approvals.protected_files).")
PROCESS_ATTACH = _p(
    "process-attach",
    "Attaches to a running process or reads its memory (gdb -p, strace -p, gcore, py-spy dump, "
    "/proc/PID/mem): what it holds is read.",
)
SUPERVISOR_CONTROL = _p(
    "supervisor-control",
    "Acts as the operator: runs the supervisor's CLI, or changes its configuration "
    "(multiplex.yaml), its state (.multiplex/) or this profile's records (logs/).",
)
DANGEROUS: tuple[Pattern, ...] = (
    UNPARSEABLE,
    OVER_LIMIT,
    RECURSIVE_DELETE,
    FIND_DELETE,
    SHRED,
    PERMISSIONS,
    DISK_TOOL,
    SQL_DESTRUCTIVE,
    SERVICE_STOP,
    PROCESS_KILL,
    DOWNLOAD_EXEC,
    PIPE_TO_SHELL,
    SENSITIVE_WRITE,
    CRONTAB,
    GIT_HISTORY,
    CLOUD_METADATA,
    PACKAGE_REMOVAL,
    INFRA_DESTROY,
    FIREWALL,
    NETWORK_CHANGE,
    SYSTEM_SETTING,
    ACCOUNT,
    PRIVILEGE,
    DYNAMIC_PROGRAM,
    SCRIPT_DESTRUCTIVE,
    DYNAMIC_TARGET,
    SCRIPT_EXEC,
    COMMAND_VARIABLE,
    NETWORK_REDIRECT,
    REVERSE_SHELL,
    EXFILTRATION,
    SECRET_READ,
    PERSISTENCE,
    PRIVILEGED_CONTAINER,
    SUPERVISOR_CONTROL,
    PROCESS_ATTACH,
)
