"""Programs that start another program given on their command line (docs/security.md#code-carriers).

``launched(prog, args)`` is the argv (or the shell lines) a launcher starts, for
the launchers not written as plain wrappers in ``_unwrap.py``: ``perf record CMD``,
``ip netns exec``, containers and machines (``docker|podman exec``, ``compose exec``,
``kubectl exec|run|debug -- CMD``, ``oc rsh``, ``lxc|incus|multipass exec``,
``machinectl shell``, ``mosh -- CMD``), package runners (``npx``, ``npm exec``,
``pnpm|yarn dlx``…), more wrappers (``proot``, ``mpirun``, ``srun``, ``direnv exec``…),
secret injectors and env loaders that run ``-- CMD`` (``aws-vault exec``, ``op run``,
``mise exec``…), ``fd -x``, ``cmake -E env``, ``watchexec``, terminal emulators, and
the shell lines of ``nodemon --exec``, ``ansible -a``, ``hyperfine``, ``pueue add``,
``nix-shell --run``, ``concurrently`` and the remote runners (:func:`remote_lines`:
``vagrant ssh -c``, ``gcloud … ssh --command``, ``az … --scripts``, ``aws ssm``,
``salt cmd.run``, ``pssh``, ``pdsh``, ``clush``). ``RUNNERS`` are the
``TOOL run|exec CMD`` project tools (``uv run``, ``asdf exec``…). The command found is
checked like one of the line's own (hardline, deny, allow). A pure leaf: stdlib and
``shell.parsing._argv``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from multiplex.shell.parsing._argv import (
    NextStep,
    after_options,
    operand_index,
    option_values,
    opts,
)
from multiplex.shell.parsing.runs._remote import SSH_OPTS, remote_lines
from multiplex.shell.parsing.runs._verbs import GLOBAL_OPTIONS, verb_index

__all__ = ["LAUNCHERS", "RUNNERS", "SSH_OPTS", "find_exec", "launched", "remote_lines"]

_UV_RUN = opts("--with -p --python --project --directory --env-file --group --extra --package "
               "--from")  # fmt: skip
# "<tool> run|exec PROGRAM …" runners: the program is checked too.
RUNNERS: dict[str, tuple[str, frozenset[str]]] = {
    "uv": ("run", _UV_RUN),
    "poetry": ("run", opts("-C --directory -P --project")),
    "pipenv": ("run", frozenset()),
    "pdm": ("run", opts("-p --project")),
    "bundle": ("exec", frozenset()),
    "conda": ("run", opts("-n --name -p --prefix")),
    "mamba": ("run", opts("-n --name -p --prefix")),
    "micromamba": ("run", opts("-n --name -p --prefix")),
    "hatch": ("run", opts("-e --env")),
    "rye": ("run", frozenset()),
    "pixi": ("run", opts("-e --environment --manifest-path")),
    "devbox": ("run", opts("-c --config")),
    "asdf": ("exec", frozenset()),
    "rbenv": ("exec", frozenset()),
    "pyenv": ("exec", frozenset()),
    "nodenv": ("exec", frozenset()),
    "goenv": ("exec", frozenset()),
    "jenv": ("exec", frozenset()),
    "fnm": ("exec", opts("--using")),
    "volta": ("run", opts("--node --npm --yarn --pnpm --bundled-npm")),
    "toolbox": ("run", opts("-c --container -d --distro -r --release")),
}

_PERF = opts(
    "-e --event -o --output -p --pid -t --tid -F --freq -c --count -C --cpu -G --cgroup "
    "-r --repeat -x --field-separator -m --mmap-pages -u --uid --call-graph --filter -I"
)
_CONTAINER_EXEC = opts("-e --env --env-file -u --user -w --workdir --detach-keys")
_KUBECTL = opts(
    "-n --namespace --context --cluster --user -s --server --kubeconfig -c --container "
    "--image --port --env --labels -l --overrides --restart --serviceaccount --pod-running-timeout"
)
_NPX = opts("-p --package -c --call -w --workspace")
_FLATPAK = opts("--command --branch --arch --runtime --runtime-version --cwd --env --filesystem "
                "--socket --device --share --unshare --talk-name --own-name")  # fmt: skip
# "TOOL VERB CMD": npm exec (and its alias x), pnpm/yarn exec and dlx, bun x.
_EXEC_VERB = {"npm": ("exec", "x"), "pnpm": ("exec", "dlx"), "yarn": ("exec", "dlx"),
              "composer": ("exec",), "bun": ("x",), "stack": ("exec",),
              "cabal": ("exec",)}  # fmt: skip
_ANSIBLE_SHELLS = frozenset({"shell", "command", "raw", "ansible.builtin.shell",
                             "ansible.builtin.command", "ansible.builtin.raw"})  # fmt: skip

# More programs that run the command after their own options (and N operands of theirs).
_PLAIN: dict[str, tuple[frozenset[str], int]] = {
    "dbus-launch": (opts("--config-file"), 0),
    "proot": (opts("-r --rootfs -b --bind -m --mount -w --pwd --cwd -q --qemu -k --kernel-release"), 0),
    "fakechroot": (opts("-l --lib -d --elfloader -e --environment -c --config-dir"), 0),
    "mpirun": (opts("-n -np -N -H --host --hostfile --machinefile -x --map-by --bind-to --wdir"), 0),
    "mpiexec": (opts("-n -np -N -H --host --hostfile --machinefile -x --map-by --bind-to --wdir"), 0),
    "srun": (opts("-n --ntasks -N --nodes -p --partition -t --time -c --cpus-per-task -J "
                  "--job-name -A --account --mem -w --nodelist -D --chdir -o --output"), 0),
    "systemd-nspawn": (opts(
        "-D --directory -i --image -M --machine -u --user --chdir -E --setenv --bind --bind-ro "
        "--tmpfs --overlay --overlay-ro --property -p --port --capability --drop-capability "
        "--uuid --slice --private-users --personality --link-journal --resolv-conf --timezone "
        "--console --pivot-root --template --kill-signal --rlimit --oom-score-adjust "
        "--cpu-affinity --hostname --system-call-filter --network-interface --network-macvlan "
        "--network-ipvlan --network-veth-extra --network-bridge --network-zone --network-namespace-path "
        "--root-hash --root-hash-sig --verity-data --bind-user --load-credential --set-credential "
        "--inaccessible --notify-ready --private-users-ownership --ephemeral-from"), 0),
    "systemd-cat": (opts("-t --identifier -p --priority --stderr-priority"), 0),
    "nq": (frozenset(), 0), "tsp": (opts("-L -D -N -W"), 0), "ifne": (frozenset(), 0),
    "run-one": (frozenset(), 0), "run-this-one": (frozenset(), 0), "gpg-agent": (frozenset(), 0),
    "retry": (opts("-t --times -d --delay -m --min -x --max"), 0), "empty": (opts("-i -o -L"), 0),
    "minijail0": (opts("-u -g -c -S -P -b -k -T -V"), 0), "sandbox-exec": (opts("-p -f -n"), 0),
    "direnv": (frozenset(), 2),  # direnv exec DIR CMD
    "nvm": (opts("--silent --lts"), 2),  # nvm exec VERSION CMD
    "schroot": (opts("-c --chroot -u --user -d --directory -n --session-name -o --option"), 0),
    "lima": (frozenset(), 0),  # lima CMD: in the default Lima machine
    "dtach": (opts("-n -c -A -a -p -e -r"), 0),  # dtach -n SOCKET CMD: detached
    "abduco": (opts("-n -c -A -a -e"), 0),
    # cgroups, sleep inhibitors, s6's and daemontools' user switches, a host from a sandbox
    "cgexec": (opts("-g"), 0), "systemd-inhibit": (opts("--what --who --why --mode"), 0),
    "with-contenv": (frozenset(), 0), "s6-setuidgid": (frozenset(), 1),
    "setuidgid": (frozenset(), 1), "envuidgid": (frozenset(), 1),
    "host-spawn": (opts("-cwd -env"), 0), "distrobox-host-exec": (frozenset(), 0),
    "flatpak-spawn": (opts("--env --directory --forward-fd --sandbox-expose "
                           "--sandbox-expose-ro --sandbox-flag --app-path --usr-path"), 0),
}  # fmt: skip
# Terminal emulators: "-e CMD ARGS…" (xterm's family), "-- CMD ARGS…" (gnome-terminal, kitty).
_TERMINALS = frozenset({"xterm", "uxterm", "urxvt", "rxvt", "alacritty", "konsole", "st",
                        "gnome-terminal", "kitty", "wezterm", "foot", "terminator"})  # fmt: skip
# "TOOL VERB [opts] -- CMD": secret injectors and env loaders run CMD with secrets set.
_DASHED = {"aws-vault": "exec", "op": "run", "doppler": "run", "dotenv": "", "infisical": "run",
           "envchain": "", "chamber": "exec", "teller": "run", "sops": "exec-env", "mise": "exec",
           "rtx": "exec", "reflex": "", "guix": "shell"}  # fmt: skip
# Shell lines they run: every operand of hyperfine, pueue add's, nix-shell --run's.
_SHELL_LINES = frozenset({"hyperfine", "pueue", "nix-shell", "nix", "scl"})

# Multiplexers' and terminals' "open a pane running CMD": "TOOL VERB… [opts] [--] CMD…".
_PANES = {"zellij": (("run",), ("action", "new-pane")), "kitty": (("@", "launch"),),
          "kitten": (("@", "launch"),)}  # fmt: skip
_PANE_OPTS = opts(
    "-d --direction --cwd -n --name --width --height -x -y --pinned --title --window-title "
    "--tab-title --type --env --var --location -m --match --next-to --stdin-source "
    "--os-window-title --os-window-name --os-window-class --source-window"
)
# Programs that type text into a terminal (screen's stuff, X's and Wayland's keyboards).
_TYPISTS = frozenset({"screen", "xdotool", "ydotool"})
_TYPING_OPTS = opts("--delay --window --clearmodifiers --file --terminator --key-delay -d")
# Containers, machines and hosts a command is run in: "TOOL exec NAME [--] CMD…".
_MACHINES = {"lxc": "exec", "incus": "exec", "multipass": "exec", "machinectl": "shell",
             "distrobox": "enter", "limactl": "shell", "colima": "ssh"}  # fmt: skip
_COMPOSE = opts("-e --env -u --user -w --workdir --index --name --entrypoint -l --label -p --publish "
                "-v --volume")  # fmt: skip
# Tools that run a shell line on remote hosts: the option (or operand) holding it.
_REMOTE_LINES = frozenset({"vagrant", "gcloud", "az", "aws", "salt", "salt-ssh", "salt-call", "puppet", "pssh",
                           "parallel-ssh", "pdsh", "clush", "concurrently"})  # fmt: skip
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})
_COREPACK = frozenset({"npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg"})

LAUNCHERS = frozenset(
    {*GLOBAL_OPTIONS, *_TYPISTS, "perf", "ip", "docker", "podman", "nerdctl", "kubectl", "oc", "npx", "bunx", "nodemon",
     "ansible", "docker-compose", "mosh", "cmake", "fd", "fdfind", "watchexec", "corepack", "capsh",
     "gdb", "cgdb", "lldb", "entr", "flatpak", "start-stop-daemon",
     *_EXEC_VERB,
     *_PLAIN, *_DASHED, *_SHELL_LINES, *_TERMINALS, *_MACHINES, *_REMOTE_LINES, *_PANES}
)  # fmt: skip


def _pane_verb(prog: str, args: Sequence[str]) -> tuple[str, ...] | None:
    return next((v for v in _PANES[prog] if tuple(args[: len(v)]) == v), None)


def _unversioned(argv: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """``rimraf@5 /``, ``@scope/tool@1 x``: the package's program, without its version."""
    if not argv or "@" not in argv[0][1:]:
        return argv
    return (argv[0][0] + argv[0][1:].partition("@")[0], *argv[1:])


def launched(prog: str, args: Sequence[str]) -> NextStep | None:
    """What ``prog ARGS`` starts, or None when it starts nothing this module knows."""
    if (k := verb_index(prog, args)) and k < len(args):  # docker -H HOST exec …: its verb's command
        return NextStep(inner=(prog, *args[k:]))
    if prog == "perf" and args[:1] in (("record",), ("stat",), ("trace",)):
        inner = after_options(args[1:], _PERF)
    elif prog == "ip" and tuple(args[:2]) == ("netns", "exec") and len(args) > 3:
        inner = tuple(args[3:])
    elif prog in ("docker", "podman", "nerdctl") and args[:1] == ("exec",):
        rest = after_options(args[1:], _CONTAINER_EXEC)  # the container, then its command
        inner = rest[1:] if rest is not None and len(rest) > 1 else None
    elif prog in ("docker", "podman", "docker-compose") and (start := _compose_exec(prog, args)):
        rest = after_options(args[start:], _COMPOSE)  # [docker] compose exec SERVICE CMD
        inner = rest[1:] if rest is not None and len(rest) > 1 else None
    elif prog in ("kubectl", "oc") and args[:1] in (("exec",), ("run",), ("debug",)):
        inner = tuple(args[list(args).index("--") + 1 :]) if "--" in args else None
    elif prog == "oc" and args[:1] == ("rsh",):  # oc rsh POD CMD…
        rest = after_options(args[1:], _KUBECTL)
        inner = rest[1:] if rest is not None and len(rest) > 1 else None
    elif prog in _MACHINES and args[:1] == (_MACHINES[prog],):
        rest = tuple(args[1:])
        if "--" in rest:
            inner = rest[rest.index("--") + 1 :] or None
        else:  # the machine (or container), then its command
            rest = after_options(rest, _CONTAINER_EXEC) or ()
            inner = rest[1:] or None
    elif prog in _PANES and (pane := _pane_verb(prog, args)):
        inner = after_options(args[len(pane) :], _PANE_OPTS)
    elif prog == "capsh" and "--" in args:  # capsh [opts] -- ARGS: /bin/bash ARGS
        inner = ("bash", *args[list(args).index("--") + 1 :])
    elif prog == "mosh" and "--" in args:  # mosh [opts] HOST -- CMD…
        inner = tuple(args[list(args).index("--") + 1 :]) or None
    elif prog == "cmake" and args[:1] == ("-E",) and args[1:2] in (("env",), ("time",)):
        k = 2 + operand_index(args[2:], frozenset(), assignments=True)  # env [VAR=…] CMD
        k += 1 if args[2:3] == ("--",) else 0
        inner = tuple(args[k:]) or None
    elif prog in ("fd", "fdfind"):
        marks = [i for i, a in enumerate(args) if a in _FD_EXEC]
        inner = tuple(args[marks[0] + 1 :]) if marks else None
        if inner and ";" in inner:
            inner = inner[: inner.index(";")]
    elif prog == "watchexec":
        return _watchexec(args)
    elif prog in _TYPISTS:  # text typed into a terminal: what it runs when Enter comes
        return _typed(prog, args)
    elif prog in ("gdb", "cgdb") and "--args" in args:  # gdb -ex run --args CMD…
        inner = tuple(args[list(args).index("--args") + 1 :]) or None
    elif prog == "lldb" and "--" in args:
        inner = tuple(args[list(args).index("--") + 1 :]) or None
    elif prog == "entr":  # entr -s 'LINE': $SHELL -c LINE (otherwise a plain wrapper)
        rest = after_options(args, frozenset())
        shelled = any(a.startswith("-") and "s" in a for a in args[: len(args) - len(rest or ())])
        return NextStep(shell_payloads=rest[:1]) if shelled and rest else None
    elif prog == "flatpak" and args[:1] == ("run",):  # flatpak run --command=X APP ARGS…
        command = option_values(args[1:], ("--command",))
        rest = after_options(args[1:], _FLATPAK)
        inner = (command[-1], *rest[1:]) if command and rest else None
    elif prog == "start-stop-daemon" and {"-S", "--start"} & set(args):
        program = option_values(args, ("--startas", "-a")) or option_values(args, ("--exec", "-x"))
        after = args[list(args).index("--") + 1 :] if "--" in args else ()
        inner = (program[-1], *after) if program else None
    elif prog == "corepack":  # corepack npm@10 publish: the package manager it runs
        rest = after_options(args, frozenset())
        name = rest[0].partition("@")[0] if rest else ""
        inner = (name, *rest[1:]) if rest and name in _COREPACK else None
    elif prog in _REMOTE_LINES:
        lines = remote_lines(prog, args)
        return NextStep(shell_payloads=tuple(lines)) if lines else None
    elif prog in ("npx", "bunx"):
        inner = _unversioned(after_options(args, _NPX))
    elif prog in _EXEC_VERB and args[:1] and args[0] in _EXEC_VERB[prog]:
        inner = _unversioned(after_options(args[1:], _NPX))
        if prog == "yarn" and args[0] == "exec" and inner:  # yarn 2+: a script, then its args
            return NextStep(shell_payloads=(" ".join((inner[0], *map(shlex.quote, inner[1:]))),))
    elif prog == "nodemon":
        code = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--exec", "-x")]
        code += [a.partition("=")[2] for a in args if a.startswith("--exec=")]
        return NextStep(shell_payloads=tuple(code)) if code else None
    elif prog == "ansible":
        return _ansible(args)
    elif prog in _PLAIN:
        with_arg, skip = _PLAIN[prog]
        if prog in ("direnv", "nvm") and args[:1] != ("exec",):
            return None
        k = operand_index(args, with_arg) + skip
        inner = tuple(args[k:]) if k < len(args) else None
    elif prog in _DASHED:
        verb = _DASHED[prog]
        if (verb and args[:1] != (verb,)) or "--" not in args:
            return None
        inner = tuple(args[list(args).index("--") + 1 :]) or None
    elif prog in _SHELL_LINES:
        return _shell_lines(prog, args)
    elif prog in _TERMINALS:
        marks = [i for i, a in enumerate(args) if a in ("-e", "--", "-x", "--command")]
        inner = tuple(args[marks[0] + 1 :]) if marks else None
        if inner and len(inner) == 1 and any(c in inner[0] for c in " \t;|&"):
            return NextStep(shell_payloads=inner)  # one word with blanks: run by a shell
    else:
        return None
    return NextStep(inner=inner) if inner else None


def _typed(prog: str, args: Sequence[str]) -> NextStep | None:
    """``screen -X stuff TEXT``, ``xdotool type TEXT``, ``ydotool type TEXT``: TEXT as a line."""
    if prog == "screen":
        at = [i for i, a in enumerate(args[:-2]) if a == "-X" and args[i + 1] == "stuff"]
        texts = [args[i + 2] for i in at]
    else:
        rest = after_options(args[1:], _TYPING_OPTS) if args[:1] == ("type",) else None
        texts = [" ".join(rest)] if rest else []
    lines = [t.replace("\\n", "\n").replace("\\r", "\n").replace("^M", "\n") for t in texts]
    return NextStep(shell_payloads=tuple(lines)) if lines else None


_COMPOSE_GLOBAL = opts(
    "-f --file -p --project-name --profile --env-file --project-directory --ansi --parallel "
    "--progress"
)


def _compose_exec(prog: str, args: Sequence[str]) -> int:
    """Where the words after ``[docker] compose [opts] exec`` begin, or 0."""
    first = 0 if prog == "docker-compose" else 1
    if first and args[:1] != ("compose",):
        return 0
    k = first + operand_index(args[first:], _COMPOSE_GLOBAL)
    return k + 1 if args[k : k + 1] == ("exec",) else 0


_WATCHEXEC = opts(
    "-w --watch -W --watch-non-recursive -e --exts -f --filter -i --ignore -s --signal "
    "-d --debounce --delay-run --shell -E --env --workdir --project-origin --poll "
    "--on-busy-update --stop-signal --stop-timeout --filter-file --ignore-file "
    "--emit-events-to --log-file --color -j --filter-prog"
)


def _watchexec(args: Sequence[str]) -> NextStep | None:
    """``watchexec [opts] -- CMD…``; one word without ``--`` is a shell line."""
    if "--" in args:
        inner = tuple(args[list(args).index("--") + 1 :])
        return NextStep(inner=inner) if inner else None
    rest = after_options(args, _WATCHEXEC)
    if not rest:
        return None
    return NextStep(shell_payloads=rest) if len(rest) == 1 else NextStep(inner=rest)


def _shell_lines(prog: str, args: Sequence[str]) -> NextStep | None:
    """``hyperfine CMD…``, ``pueue add CMD``, ``nix-shell --run CMD``, ``nix develop -c CMD``,
    ``scl enable COLLECTION… CMD``."""
    if prog == "hyperfine":
        valued = opts("-w --warmup -m --min-runs -M --max-runs -r --runs -p --prepare -c "
                      "--cleanup -s --setup --export-json --export-csv --export-markdown -S "
                      "--shell -u --time-unit -L --parameter-list -n --command-name")  # fmt: skip
        lines = [
            a for i, a in enumerate(args) if a[:1] != "-" and (i == 0 or args[i - 1] not in valued)
        ]
        lines += [
            args[i + 1]
            for i, a in enumerate(args[:-1])
            if a in opts("-p --prepare -c --cleanup -s --setup")
        ]
    elif prog == "pueue" and args[:1] == ("add",):
        lines = [" ".join(a for a in args[1:] if a[:1] != "-")]
    elif prog == "nix-shell":
        lines = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--run", "--command")]
    elif prog == "scl" and args[:1] in (("enable",), ("run",)):  # scl enable COLL… CMD
        if "--" in args:
            return NextStep(inner=tuple(args[list(args).index("--") + 1 :]) or None)
        lines = list(args[-1:]) if len(args) > 2 else []
    elif prog == "nix" and args[:1] in (("develop",), ("shell",)):
        for i, a in enumerate(args):
            if a in ("-c", "--command") and i + 1 < len(args):
                return NextStep(inner=tuple(args[i + 1 :]))
        return None
    else:
        return None
    lines = [line for line in lines if line.strip()]
    return NextStep(shell_payloads=tuple(lines)) if lines else None


def _ansible(args: Sequence[str]) -> NextStep | None:
    """``ansible HOSTS -m shell -a CMD``: the module's argument is a command line."""
    module = ""
    payloads: list[str] = []
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("-m", "--module-name"):
            module = value
        elif arg.startswith("--module-name="):
            module = arg.partition("=")[2]
        elif arg in ("-a", "--args"):
            payloads.append(value)
        elif arg.startswith("--args="):
            payloads.append(arg.partition("=")[2])
    if (module and module not in _ANSIBLE_SHELLS) or not payloads:  # no -m: "command"
        return None
    return NextStep(shell_payloads=tuple(payloads))


_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_EXPRESSION = ("-", "(", "!", ")")


def find_exec(args: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The commands find's ``-exec``/``-execdir``/``-ok``/``-okdir`` run, ``{}`` a path
    under each starting point but the working folder (``find /var/log -exec truncate
    -s0 {} +`` empties ``/var/log/{}``), for at most eight of them."""
    roots: list[str] = []
    for arg in args:
        if arg.startswith(_FIND_EXPRESSION):
            break
        roots.append(arg)
    prefixes = [f"{r.rstrip('/')}/" for r in roots[:8] if r not in (".", "./")] or [""]
    runs: list[tuple[str, ...]] = []
    i = 0
    while i < len(args):
        if args[i] in _FIND_RUNS:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                run = args[i + 1 : j]
                runs += [tuple(w.replace("{}", p + "{}") for w in run) for p in prefixes]
            i = j
        i += 1
    return tuple(runs)
