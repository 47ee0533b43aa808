"""docker's own equivalent spellings, for deny rules by meaning (docs/allowlist.md#what-a-deny-rule-reaches).

``docker image push`` is ``docker push``, ``docker compose -f x push`` reads its verb
past compose's options, and a build that pushes (``buildx build --push``) is a push;
podman and nerdctl share the table. A pure leaf: stdlib only.
"""

from __future__ import annotations

__all__ = ["DOCKER_LIKE", "compose", "docker_push", "managed_verb"]

Argv = tuple[str, ...]


# docker's management commands and their classic names (podman and nerdctl share them).
_DOCKER_MANAGED = {
    "image": {
        "rm": "rmi", "remove": "rmi", "ls": "images", "list": "images", "build": "build",
        "history": "history", "import": "import", "inspect": "inspect", "load": "load",
        "pull": "pull", "push": "push", "save": "save", "tag": "tag",
    },
    "container": {
        "rm": "rm", "remove": "rm", "ls": "ps", "list": "ps", "ps": "ps", "attach": "attach",
        "commit": "commit", "cp": "cp", "create": "create", "diff": "diff", "exec": "exec",
        "export": "export", "inspect": "inspect", "kill": "kill", "logs": "logs",
        "pause": "pause", "port": "port", "rename": "rename", "restart": "restart",
        "run": "run", "start": "start", "stats": "stats", "stop": "stop", "top": "top",
        "unpause": "unpause", "update": "update", "wait": "wait",
    },
    "builder": {"build": "build"},
    "buildx": {"build": "build", "b": "build"},
    "manifest": {"push": "push"},  # a manifest list pushed to the registry
}  # fmt: skip
DOCKER_LIKE = frozenset({"docker", "podman", "nerdctl"})


def managed_verb(argv: Argv, i: int) -> Argv | None:
    """``docker image push x`` (its verb at ``i``) as ``docker push x``, the classic name."""
    managed = _DOCKER_MANAGED.get(argv[i])
    if managed is None or i + 1 >= len(argv) or argv[i + 1] not in managed:
        return None
    return (*argv[:i], managed[argv[i + 1]], *argv[i + 2 :])


# docker compose's own options before its verb (docker compose -f prod.yml down).
_COMPOSE_VALUE = frozenset(
    {"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
     "--ansi", "--parallel", "--progress"}
)  # fmt: skip


def compose(argv: Argv, i: int) -> Argv | None:
    """``docker compose [its options] VERB …`` as ``docker compose VERB … [its options]``."""
    if argv[i] != "compose":
        return None
    k, moved = i + 1, list[str]()
    while k < len(argv) and argv[k].startswith("-") and argv[k] != "--":
        takes_value = argv[k] in _COMPOSE_VALUE
        moved += argv[k : k + (2 if takes_value else 1)]
        k += 2 if takes_value else 1
    if not moved or k >= len(argv):
        return None
    return (*argv[: i + 1], argv[k], *argv[k + 1 :], *moved)


def docker_push(argv: Argv, i: int) -> Argv | None:
    """``docker buildx build --push -t IMG``, ``docker compose push``, ``docker buildx
    imagetools create -t IMG``: a push."""
    verbs = argv[i : i + 2]
    if verbs[:1] == ("compose",) and "push" in argv[i + 1 :]:
        return ("docker", "push", *argv[argv.index("push", i + 1) + 1 :])
    if verbs == ("buildx", "imagetools") and argv[i + 2 : i + 3] == ("create",):
        # buildx imagetools create -t IMG SRC…: a manifest made from SRC pushed as IMG
        made = [argv[k + 1] for k in range(i, len(argv) - 1) if argv[k] in ("-t", "--tag")]
        made += [a.partition("=")[2] for a in argv if a.startswith("--tag=")]
        return ("docker", "push", *made) if made and "--dry-run" not in argv else None
    building = verbs[:1] == ("build",) or verbs in (("buildx", "build"), ("buildx", "bake"))
    building = building or (verbs == ("compose", "build"))  # compose build --push
    pushing = "--push" in argv or any(a.startswith("--output=type=registry") for a in argv)
    if not (building and pushing):
        return None
    tags = [argv[k + 1] for k in range(i, len(argv) - 1) if argv[k] in ("-t", "--tag")]
    tags += [a.partition("=")[2] for a in argv if a.startswith("--tag=")]
    return ("docker", "push", *tags)
