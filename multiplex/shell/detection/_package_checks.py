"""Package removal and infrastructure deletion, judged by program and arguments (docs/security.md#named-patterns).

Two families of ``dangerous_check`` (``shell.detection._command_checks``): the
package managers' uninstall verbs and the cluster, container and cloud CLIs'
delete verbs. A pure leaf: stdlib, the catalogue and ``shell.parsing._argv``.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.detection._catalogue import (
    ACCOUNT,
    INFRA_DESTROY,
    PACKAGE_REMOVAL,
    PRIVILEGE,
    Pattern,
)
from multiplex.shell.parsing._argv import first_operand, operands
from multiplex.shell.parsing.runs._verbs import kube_words

__all__ = ["INFRA", "PACKAGERS", "infra_check", "package_check"]

PACKAGERS = frozenset(
    {"apt", "apt-get", "aptitude", "yum", "dnf", "microdnf", "zypper", "brew", "port", "gem",
     "cargo", "snap", "conda", "mamba", "uv", "npm", "pnpm", "yarn", "pacman", "apk", "dpkg",
     "rpm", "flatpak"}
)  # fmt: skip
# Hosting, database and registry CLIs whose verbs delete what they name: the verb words.
_DELETE_VERBS = {
    "doctl": ("delete", "rm"), "hcloud": ("delete",), "linode-cli": ("delete", "rm"),
    "scw": ("delete",), "exo": ("delete",), "vultr-cli": ("delete",),
    "heroku": ("apps:destroy", "destroy", "pg:reset", "addons:destroy", "apps:delete"),
    "flyctl": ("destroy",), "fly": ("destroy",), "vercel": ("remove", "rm"),
    "netlify": ("sites:delete",), "dropdb": (), "mysqladmin": ("drop",),
    "influx": ("delete",), "etcdctl": ("del", "delete"), "consul": ("delete",),
    "vault": ("disable", "destroy", "delete"), "gh": ("delete",), "glab": ("delete",),
    "npm": ("unpublish",), "cargo": ("yank",), "gem": ("yank",), "pnpm": ("unpublish",),
    "yarn": ("unpublish",), "cdk": ("destroy",), "sst": ("remove",), "serverless": ("remove",),
    "sls": ("remove",), "amplify": ("delete",), "copilot": ("delete",),
    "supabase": ("delete",), "firebase": ("projects:delete", "hosting:disable", "database:remove",
    "firestore:delete", "functions:delete"), "kafka-topics": ("--delete",),
    "kafka-topics.sh": ("--delete",), "rabbitmqctl": ("delete_queue", "delete_vhost", "reset",
    "force_reset", "purge_queue"),
}  # fmt: skip
# A key added to the forge account the CLI is signed in to.
_KEY_ADDS = (["ssh-key", "add"], ["gpg-key", "add"], ["deploy-key", "add"])
# Programs of _DELETE_VERBS that another branch below also judges.
_SHARED = frozenset({"docker", "podman", "kubectl", "oc", "helm", "aws", "gcloud", "az"})
_COMPOSE = frozenset({"docker-compose", "podman-compose"})
INFRA = frozenset(
    {"kubectl", "oc", "helm", "docker", "podman", "nerdctl", "terraform", "tofu", "pulumi", "aws",
     "gcloud", "az", "gsutil", "terragrunt", *_COMPOSE, *_DELETE_VERBS}
)  # fmt: skip


def _compose_down(words: list[str]) -> bool:
    """``compose … down``: compose's own options before ``down`` may take values
    (``-f prod.yml``, ``-p NAME``), read here as words."""
    return "compose" in words and "down" in words[words.index("compose") + 1 :]


def package_check(prog: str, args: Sequence[str]) -> Pattern | None:
    """``package-removal``: a system or global package uninstalled."""
    if prog not in PACKAGERS and not prog.startswith("pip"):
        return None  # the operands of any other program's argv are never read
    verb = first_operand(args)
    if prog in ("apt", "apt-get", "aptitude") and verb in ("remove", "purge", "autoremove"):
        return PACKAGE_REMOVAL
    if prog in ("yum", "dnf", "microdnf", "zypper") and verb in (
        "remove",
        "erase",
        "autoremove",
        "rm",
    ):
        return PACKAGE_REMOVAL
    if prog in ("brew", "port", "gem", "cargo", "snap", "flatpak") and verb in (
        "uninstall",
        "remove",
        "rm",
    ):
        return PACKAGE_REMOVAL
    if prog in ("conda", "mamba") and verb in ("remove", "uninstall"):
        return PACKAGE_REMOVAL
    if (prog.startswith("pip") or prog == "uv") and "uninstall" in [a.lower() for a in args[:3]]:
        return PACKAGE_REMOVAL
    npm_remove = verb in ("uninstall", "remove", "rm", "un", "r", "global")
    if (
        prog in ("npm", "pnpm", "yarn")
        and npm_remove
        and (verb == "global" or "-g" in args or "--global" in args)
    ):
        return PACKAGE_REMOVAL
    if prog == "pacman" and any(a.startswith("-R") for a in args):
        return PACKAGE_REMOVAL
    if prog == "apk" and verb == "del":
        return PACKAGE_REMOVAL
    if prog in ("dpkg", "rpm") and any(
        a in ("-r", "-P", "--remove", "--purge", "-e", "--erase") for a in args
    ):
        return PACKAGE_REMOVAL
    return None


def _removes(words: Sequence[str]) -> bool:
    """docker rm/rmi, container rm, image rm: containers or images removed."""
    return words[:1] in (["rm"], ["rmi"]) or words[:2] in (["container", "rm"], ["image", "rm"])


def _grants_cluster_admin(args: Sequence[str]) -> bool:
    """``kubectl create clusterrolebinding X --clusterrole=cluster-admin --user=…`` (or a
    rolebinding to it), ``oc adm policy add-cluster-role-to-user cluster-admin …``: a
    subject made the cluster's administrator."""
    if "cluster-admin" not in args and not any(a.endswith("=cluster-admin") for a in args):
        return False
    words = kube_words(args)
    return words[:2] in (["create", "clusterrolebinding"], ["create", "rolebinding"]) or (
        words[:3] == ["adm", "policy", "add-cluster-role-to-user"]
        or words[:3] == ["adm", "policy", "add-cluster-role-to-group"]
    )


def _method_delete(args: Sequence[str]) -> bool:
    """``-X DELETE``, ``-XDELETE``, ``--method DELETE``, ``--method=delete``."""
    methods = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-X", "--method")]
    methods += [a[2:] for a in args if a.startswith("-X") and len(a) > 2]
    methods += [a.partition("=")[2] for a in args if a.startswith("--method=")]
    return any(m.upper() == "DELETE" for m in methods)


def _adds_a_key(ops: list[str]) -> bool:
    """``ssh-key add``, ``gpg-key add``, ``repo deploy-key add``."""
    return ops[:2] in _KEY_ADDS or ops[1:3] in _KEY_ADDS


def infra_check(prog: str, args: Sequence[str]) -> Pattern | None:
    """``infra-destroy``: cluster, container or cloud resources deleted (helm's aliases too)."""
    if prog not in INFRA:
        return None
    if prog in ("kubectl", "oc") and _grants_cluster_admin(args):
        return PRIVILEGE
    if prog in ("gh", "glab") and "api" in args and _method_delete(args):
        return INFRA_DESTROY  # gh api -X DELETE repos/o/r: what gh repo delete does
    if prog in ("gh", "glab") and "add" in args and _adds_a_key(operands(args)[:3]):
        return ACCOUNT  # gh ssh-key add KEY.pub: whoever holds KEY signs in as the account
    verbs = _DELETE_VERBS.get(prog)
    if verbs and prog not in _SHARED and not any(v in args for v in verbs):
        return None  # (a C-speed test: most of their commands name no deleting verb)
    words = [a.lower() for a in operands(args)]
    if (
        prog in ("kubectl", "oc")
        and (
            words[:1] == ["delete"]
            or (words[:1] == ["replace"] and "--force" in args)  # deleted, then made anew
            or (words[:1] == ["apply"] and any(a.partition("=")[0] == "--prune" for a in args))
        )
    ):  # apply --prune: what the manifests no longer name is deleted
        return INFRA_DESTROY
    if prog == "helm" and words[:1] in (["uninstall"], ["delete"], ["del"], ["un"]):
        return INFRA_DESTROY
    if prog in _COMPOSE:
        words = ["compose", *words]  # docker-compose down -v is docker compose down -v
    if prog in ("docker", "podman", "nerdctl", *_COMPOSE) and (
        "prune" in words
        or words[:2] in (["volume", "rm"], ["system", "reset"])
        or (_compose_down(words) and bool({"-v", "--volumes"} & set(args)))
        or (_removes(words) and any("$(" in a or "`" in a for a in args))  # rm $(docker ps -aq)
    ):
        return INFRA_DESTROY
    if (
        prog in ("terraform", "tofu", "pulumi", "terragrunt")
        and (
            "destroy" in words
            or (prog == "pulumi" and words[:1] == ["down"])  # pulumi's alias of destroy
            or "-destroy" in args
            or words[:2] in (["state", "rm"], ["stack", "rm"], ["workspace", "delete"])
            or any(a.startswith(("-replace=", "--replace=")) for a in args)  # destroyed, made anew
        )
    ):
        return INFRA_DESTROY
    if prog == "aws" and (
        words[:2] in (["s3", "rb"],)
        or (words[:2] == ["s3", "rm"] and "--recursive" in args)
        or any(w.startswith(("terminate-", "purge-")) or "delet" in w for w in words[1:3])
    ):
        return INFRA_DESTROY
    if prog in _DELETE_VERBS:  # dropdb NAME: its only verb
        verbs = _DELETE_VERBS[prog]
        named = any(w in verbs for w in words[:3]) or any(
            v[:2] == "--" and v in args for v in verbs
        )
        return INFRA_DESTROY if not verbs or named else None  # (kafka-topics --delete)
    if prog in ("gcloud", "az", "gsutil") and any(w in ("delete", "rm", "rb") for w in words):
        return INFRA_DESTROY
    return None
