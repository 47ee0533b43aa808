"""Command-line tools whose global options come before their verb (docs/approvals.md#parsing).

``docker -H ssh://prod exec web rm -rf /`` runs ``rm -rf /`` as surely as
``docker exec web rm -rf /`` does, and ``kubectl -n prod get secret db`` prints a
secret as ``kubectl get secret db`` does. Every check that reads such a tool's
verb reads it from the command with its global options set aside: the parser
hands that command on as the tool's inner command (``launched``), and the
checks of the inner command judge it. The options themselves stay on the
command as written, for the checks that read them (``--server``, ``-H``).

The tables are the options that take a value, as each tool's ``--help`` lists
its global options; bubblewrap's too, whose command follows its options
(``bwrap --bind / / rm -rf ~``). A pure leaf.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.parsing._argv import operand_index, opts

__all__ = ["GLOBAL_OPTIONS", "bwrap_command", "kube_words", "verb_index"]

_KUBE = opts(
    "-n --namespace --context --cluster --user -s --server --kubeconfig --token --as "
    "--as-group --as-uid --request-timeout -v --v --log-dir --log-file --certificate-authority "
    "--client-certificate --client-key --tls-server-name --password --username --cache-dir "
    "--profile --profile-output --vmodule --log-file-max-size --stderrthreshold --match-server-version"
)
GLOBAL_OPTIONS: dict[str, frozenset[str]] = {
    "docker": opts("-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey"),
    "podman": opts(
        "--url --connection -c --identity --root --runroot --storage-driver --storage-opt "
        "--cgroup-manager --log-level --events-backend --network-cmd-path --network-config-dir "
        "--conmon --runtime --runtime-flag --tmpdir --module --ssh --imagestore --hooks-dir "
        "--volumepath --cdi-spec-dir --config"
    ),
    "nerdctl": opts(
        "-a --address -H --host -n --namespace --snapshotter --storage-driver --cni-path "
        "--cni-netconfpath --data-root --cgroup-manager --hosts-dir --host-gateway-ip "
        "--bridge-ip --experimental"
    ),
    "kubectl": _KUBE,
    "oc": _KUBE,
    "helm": opts(
        "-n --namespace --kube-context --kubeconfig --kube-apiserver --kube-as-user "
        "--kube-as-group --kube-token --kube-ca-file --kube-tls-server-name --registry-config "
        "--repository-cache --repository-config --burst-limit --qps"
    ),
}


def verb_index(prog: str, args: Sequence[str]) -> int:
    """Where ``prog``'s verb is in ``args``: after its global options (0 when none
    come first, or ``prog`` has no table here)."""
    table = GLOBAL_OPTIONS.get(prog)
    if table is None or not args or not args[0].startswith("-"):
        return 0
    return operand_index(args, table)


# kubectl's verbs' own options that take a value, beside its global ones.
_KUBE_VERBS = _KUBE | opts(
    "-o --output -l --selector -f --filename --field-selector --template --sort-by -L "
    "--label-columns -c --container --chunk-size --subresource"
)


def kube_words(args: Sequence[str]) -> list[str]:
    """kubectl's (or oc's) operands, wherever its options stand: ``-n prod get secret
    db -o yaml`` gives ``get secret db``."""
    words: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-") and arg != "-":
            skip = arg in _KUBE_VERBS  # "--namespace=prod" carries its own value
        else:
            words.append(arg)
    return words


# bubblewrap 0.8's options by how many values follow them; the rest take none.
_BWRAP_VALUES = {
    **dict.fromkeys(
        opts(
            "--args --argv0 --userns --userns2 --pidns --uid --gid --hostname --chdir "
            "--unsetenv --lock-file --sync-fd --remount-ro --exec-label --file-label --proc "
            "--dev --tmpfs --mqueue --dir --seccomp --add-seccomp-fd --block-fd "
            "--userns-block-fd --info-fd --json-status-fd --cap-add --cap-drop --perms --size "
            "--overlay-src --tmp-overlay --ro-overlay"
        ),
        1,
    ),
    **dict.fromkeys(
        opts(
            "--bind --bind-try --dev-bind --dev-bind-try --ro-bind --ro-bind-try --symlink "
            "--setenv --file --bind-data --ro-bind-data --chmod --bind-fd --ro-bind-fd"
        ),
        2,
    ),
    "--overlay": 3,
}


def bwrap_command(args: Sequence[str]) -> int:
    """Where bubblewrap's command starts in ``args``: after its options and their values."""
    i = 0
    while i < len(args) and args[i].startswith("--"):
        if args[i] == "--":
            return i + 1
        i += 1 + _BWRAP_VALUES.get(args[i], 0)
    return i
