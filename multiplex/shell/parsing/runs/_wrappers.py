"""Plain wrappers: programs that run the argv after their own options (docs/security.md#code-carriers).

``sudo``, ``env``, ``nice``, ``timeout``, ``strace`` … each run the program that follows
their options, sometimes after operands of their own (``timeout 5 CMD``, ``chroot DIR
CMD``) or ``NAME=VALUE`` words (``env A=1 CMD``). Read by ``_unwrap``. Data only, a pure
leaf: stdlib and ``shell.parsing._argv``.
"""

from __future__ import annotations

from multiplex.shell.parsing._argv import opts

__all__ = ["BUNDLED", "RENAMED", "VERB_WRAPPERS", "WRAPPERS"]

# program -> (options taking a value, operands before the wrapped program,
#             NAME=VALUE words allowed before it)
WRAPPERS: dict[str, tuple[frozenset[str], int, bool]] = {
    "sudo": (
        opts(
            "-u --user -g --group -C --close-from -D --chdir -p --prompt -r --role "
            "-t --type -U --other-user -T --command-timeout -R --chroot"
        ),
        0,
        True,
    ),
    "sudo-rs": (
        opts("-u --user -g --group -D --chdir -p --prompt -U --other-user -T --command-timeout"),
        0,
        True,
    ),
    "run0": (
        opts(
            "-u --user -g --group -D --chdir --setenv --nice --unit --property --description "
            "--slice --background --machine"
        ),
        0,
        False,
    ),
    "doas": (opts("-u -C"), 0, False),
    "pkexec": (opts("--user"), 0, False),
    "env": (opts("-u --unset -C --chdir -P -a --argv0"), 0, True),
    "nice": (opts("-n --adjustment"), 0, False),
    "ionice": (opts("-c --class -n --classdata -p --pid -P --pgid -u --uid"), 0, False),
    "timeout": (opts("-s --signal -k --kill-after"), 1, False),
    "exec": (opts("-a"), 0, False),
    "command": (frozenset(), 0, False),
    "builtin": (frozenset(), 0, False),
    "nohup": (frozenset(), 0, False),
    "time": (opts("-f --format -o --output"), 0, False),
    "stdbuf": (opts("-i --input -o --output -e --error"), 0, False),
    "setsid": (frozenset(), 0, False),
    "unbuffer": (frozenset(), 0, False),
    "fakeroot": (frozenset(), 0, False),
    "torsocks": (frozenset(), 0, False),
    "proxychains": (opts("-f"), 0, False),
    "proxychains4": (opts("-f"), 0, False),
    "chronic": (frozenset(), 0, False),
    "chroot": (opts("--userspec --groups"), 1, False),
    "taskset": (frozenset(), 1, False),
    "chrt": (frozenset(), 1, False),
    "flock": (opts("-w --timeout -E --conflict-exit-code"), 1, False),
    "strace": (opts("-e -o -p -s -u -E -a -b -I -O -P -S -X"), 0, False),
    "ltrace": (opts("-e -o -p -s -u -n -a -A -D -F -l -w"), 0, False),
    "nsenter": (opts("-t --target -S --setuid -G --setgid"), 0, False),
    "unshare": (frozenset(), 0, False),
    "systemd-run": (
        opts(
            "-p --property -u --unit -E --setenv --uid --gid -M --machine --slice "
            "--description -H --host --working-directory"
        ),
        0,
        False,
    ),
    "xvfb-run": (
        opts("-n --server-num -s --server-args -f --auth-file -e --error-file"),
        0,
        False,
    ),
    "runuser": (opts("-u --user -g --group -G --supp-group -s --shell"), 0, False),
    "busybox": (frozenset(), 0, False),
    "toybox": (frozenset(), 0, False),
    "eatmydata": (frozenset(), 0, False),
    "nocache": (frozenset(), 0, False),
    "catchsegv": (frozenset(), 0, False),
    "dbus-run-session": (opts("--config-file --dbus-daemon"), 0, False),
    "ssh-agent": (opts("-a -E -P -t"), 0, False),
    "faketime": (opts("-m -f"), 1, False),
    "cpulimit": (opts("-l --limit -p --pid -e --exe"), 0, False),
    "numactl": (opts("-C -N -m -p -i"), 0, False),
    "prlimit": (opts("-p --pid -o --output"), 0, False),
    "setpriv": (
        opts("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set"),
        0,
        False,
    ),
    "valgrind": (frozenset(), 0, False),
    "chpst": (opts("-u -U -e -/ -n -l -L -m -d -o -p -f -c -r -t"), 0, False),
    "rlwrap": (opts("-a -b -c -e -f -H -l -p -P -S -w -z"), 0, False),
    "entr": (frozenset(), 0, False),
    "caffeinate": (opts("-t -w"), 0, False),
    "sshpass": (opts("-p -f -d -e -P"), 0, False),
    "trickle": (opts("-d -u -w -t -l -n"), 0, False),
    "tsocks": (frozenset(), 0, False),
    "firejail": (frozenset(), 0, False),
    "screen": (opts("-S -c -e -h -p -T -t -X -L -Logfile"), 0, False),
    "daemonize": (opts("-a -c -e -E -l -o -p -u"), 0, False),
    "aa-exec": (opts("-p --profile -n --namespace"), 0, False),
    "sem": (opts("-j --jobs --id"), 0, False),
    "coproc": (frozenset(), 0, False),
    "cross-env": (frozenset(), 0, True),
    "env-cmd": (opts("-f --file -e --environments -r --rc-file"), 0, False),
    # a container's init and its user switchers: tini [-p SIG] -- CMD, gosu USER CMD
    "tini": (opts("-p -e"), 0, False),
    "dumb-init": (opts("-r --rewrite"), 0, False),
    "gosu": (frozenset(), 1, False),
    "su-exec": (frozenset(), 1, False),
    "rootlesskit": (
        opts("--net --mtu --cidr --port-driver --copy-up --copy-up-mode --state-dir "
             "--subid-source --propagation --ifname --pidns --cgroupns --utsns --ipcns"),
        0,
        False,
    ),
}  # fmt: skip
# The dynamic loader runs the program it is given (ld.so /bin/rm …), and qemu's user-mode
# emulators a program of another machine, each after its own options.
_LOADER = opts("--library-path --preload --argv0 --audit --inhibit-rpath")
for _name in (
    "ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
    "ld-linux-armhf.so.3", "ld64.so.1", "ld64.so.2", "ld-musl-x86_64.so.1",
    "ld-musl-aarch64.so.1",
):  # fmt: skip
    WRAPPERS[_name] = (_LOADER, 0, False)
_QEMU = opts("-L -E -U -0 -cpu -R -g -d -D -s -B -plugin -seed -p -r")
for _arch in ("x86_64", "aarch64", "arm", "armeb", "i386", "riscv64", "ppc64le", "s390x", "mips"):
    WRAPPERS[f"qemu-{_arch}"] = WRAPPERS[f"qemu-{_arch}-static"] = (_QEMU, 0, False)

# Programs that run the argv after a verb of theirs and its options: podman unshare CMD.
VERB_WRAPPERS: dict[str, tuple[str, frozenset[str]]] = {
    "podman": ("unshare", opts("--rootless-netns")),
    "buildah": ("unshare", opts("-m --mount")),
    "dotenvx": ("run", opts("-f --env-file -e --env --convention --ops-off -fk --env-keys-file")),
}

# Distributions that ship a tool and run it by its name as their verb: microk8s kubectl
# delete … is kubectl delete … (minikube's takes its words after a "--").
BUNDLED: dict[str, frozenset[str]] = {
    "microk8s": frozenset({"kubectl", "helm", "helm3", "ctr", "istioctl", "linkerd"}),
    "k3s": frozenset({"kubectl", "crictl", "ctr"}),
    "k0s": frozenset({"kubectl", "ctr"}),
    "minikube": frozenset({"kubectl"}),
    "rke2": frozenset({"kubectl"}),
}

# Another name for a program, run with the same words: kubectl's colouring wrapper, helm 3
# as some distributions install it.
RENAMED = {"kubecolor": "kubectl", "helm3": "helm"}
