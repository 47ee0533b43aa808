"""What a command means, for deny rules (docs/allowlist.md#what-a-deny-rule-reaches).

A deny rule names an action, not a spelling: ``npm publish *`` must also block
``npm pub`` and ``docker push *`` must block ``docker image push``. :func:`meanings`
rewrites one argv into the canonical spelling of what it does, for the programs
whose equivalences are known here (npm, docker/podman/nerdctl, git, python,
systemctl/service); the deny check matches rules, rewritten the same way, against
those spellings too. Every table is closed and small; a program not listed means
only what it says. A pure leaf: stdlib only.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Sequence

__all__ = ["PYTHON_PROGRAM", "meanings"]

Argv = tuple[str, ...]


# npm's own command names and aliases (npm 10, lib/utils/cmd-list.js). npm accepts
# every unique prefix of these names (its `abbrev`), then follows aliases.
def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_NPM_COMMANDS = _words(
    "access adduser audit bugs cache ci completion config dedupe deprecate diff dist-tag "
    "docs doctor edit exec explain explore find-dupes fund get help help-search hook init "
    "install install-ci-test install-test link ll login logout ls org outdated owner pack "
    "ping pkg prefix profile prune publish query rebuild repo restart root run-script "
    "sbom search set shrinkwrap star stars start stop team test token uninstall unpublish "
    "unstar update version view whoami"
)
_NPM_ALIASES = {
    **dict.fromkeys(
        ["i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall",
         "add"], "install"
    ),
    **dict.fromkeys(["un", "unlink", "remove", "rm", "r"], "uninstall"),
    **dict.fromkeys(["run", "rum", "urn"], "run-script"),
    **dict.fromkeys(["t", "tst"], "test"),
    **dict.fromkeys(["up", "upgrade", "udpate"], "update"),
    **dict.fromkeys(["info", "show", "v"], "view"),
    **dict.fromkeys(["find", "s", "se"], "search"),
    **dict.fromkeys(
        ["ic", "isntall-clean", "install-clean", "clean-install"], "ci"
    ),
    **dict.fromkeys(["cit", "clean-install-test", "sit"], "install-ci-test"),
    **dict.fromkeys(["list", "la"], "ls"),
    **dict.fromkeys(["create", "innit"], "init"),
    "x": "exec", "why": "explain", "it": "install-test", "rb": "rebuild", "ddp": "dedupe",
    "c": "config", "author": "owner", "home": "docs", "issues": "bugs", "ln": "link",
    "dist-tags": "dist-tag", "hlep": "help", "verison": "version", "ogr": "org",
    "add-user": "adduser",
}  # fmt: skip


def _abbrev(words: Sequence[str]) -> dict[str, str]:
    """Every unique prefix of each word, and each word itself (npm's ``abbrev``)."""
    counts = Counter(word[:end] for word in words for end in range(1, len(word)))
    table = {w: w for w in words}
    for word in words:
        for end in range(1, len(word)):
            if counts[word[:end]] == 1:
                table.setdefault(word[:end], word)
    return table


_NPM_ABBREV = _abbrev(sorted(set(_NPM_COMMANDS) | set(_NPM_ALIASES)))
_CAMEL = re.compile(r"[A-Z]")

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
}  # fmt: skip
_DOCKER_LIKE = frozenset({"docker", "podman", "nerdctl"})
_GIT_SAME = {"send-pack": "push", "stage": "add"}
PYTHON_PROGRAM = re.compile(r"python(?:[23](?:\.\d+)?)?")  # the interpreters meanings() reads
_PY_VALUE = frozenset({"-X", "-W", "--check-hash-based-pycs"})


def _program(word: str) -> str:
    return word.rpartition("/")[2].casefold()


def verb_index(argv: Sequence[str], takes: frozenset[str]) -> int | None:
    """Where the subcommand is: past global options (and the values ``takes`` names)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        if argv[i] == "--":
            i += 1
            break
        i += 2 if argv[i] in takes else 1
    return i if i < len(argv) else None


def _npm(argv: Argv, i: int) -> Argv | None:
    word = argv[i]
    if _CAMEL.search(word):  # npm reads runScript as run-script
        word = _CAMEL.sub(lambda m: "-" + m.group(0).lower(), word)
    verb = _NPM_ABBREV.get(word)
    while verb in _NPM_ALIASES:
        verb = _NPM_ALIASES[verb]
    return None if verb is None or verb == argv[i] else (*argv[:i], verb, *argv[i + 1 :])


def _docker(argv: Argv, i: int) -> Argv | None:
    managed = _DOCKER_MANAGED.get(argv[i])
    if managed is None or i + 1 >= len(argv) or argv[i + 1] not in managed:
        return None
    return (*argv[:i], managed[argv[i + 1]], *argv[i + 2 :])


def _git_aliases(options: Sequence[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for j, word in enumerate(options):
        setting = options[j + 1] if word == "-c" and j + 1 < len(options) else None
        if word.startswith("-c") and len(word) > 2:
            setting = word[2:]
        if setting is not None:
            key, _, value = setting.partition("=")
            if key.casefold().startswith("alias."):
                found[key[6:].casefold()] = value
    return found


def _git(argv: Argv, i: int) -> Argv | None:
    verb = argv[i]
    alias = _git_aliases(argv[1:i]).get(verb.casefold())
    if alias is not None and not alias.startswith("!"):  # a !shell alias is a code carrier
        try:
            words = shlex.split(alias)
        except ValueError:
            return None
        return (*argv[:i], *words, *argv[i + 1 :]) if words else None
    if verb in _GIT_SAME:
        return (*argv[:i], _GIT_SAME[verb], *argv[i + 1 :])
    if verb == "subtree" and "push" in argv[i + 1 :]:
        at = argv.index("push", i + 1)
        return (*argv[:i], "push", *argv[i + 1 : at], *argv[at + 1 :])
    return None


def _relative(word: str, cwd: str | None) -> str:
    """``./x`` and an absolute path to a file of the cwd, spelled from the cwd."""
    path = posixpath.normpath(word)
    if cwd and cwd.startswith("/") and path.startswith("/"):
        base = posixpath.normpath(cwd)
        if path.startswith(base.rstrip("/") + "/"):
            return posixpath.relpath(path, base)
    return path


def _python(argv: Argv, cwd: str | None) -> Argv | None:
    """``python [options] SCRIPT args`` as ``python SCRIPT args``; None for -c and stdin."""
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            i += 2 if word in _PY_VALUE else 1
            continue
        for at, flag in enumerate(word[1:], 1):
            if flag in "XWm":
                value = word[at + 1 :] or (argv[i + 1] if i + 1 < len(argv) else "")
                i += 1 if word[at + 1 :] else 2
                if flag == "m":  # python -m deploy runs deploy.py of the cwd first
                    module = value.replace(".", "/")
                    return ("python", module + ".py", *argv[i:]) if module else None
                break
            if flag == "c":
                return None
        else:
            i += 1
    if i >= len(argv) or argv[i] == "-":
        return None
    return ("python", _relative(argv[i], cwd), *argv[i + 1 :])


def _systemctl(argv: Argv, i: int) -> list[Argv]:
    units = tuple(w.removesuffix(".service") for w in argv[i + 1 :])
    forms = [(*argv[: i + 1], *units)] if units != argv[i + 1 :] else []
    if argv[i] in ("disable", "mask") and "--now" in argv:  # also stops the unit
        forms.append((*argv[:i], "stop", *units))
    return forms


def meanings(argv: Argv, *, cwd: str | None, takes: frozenset[str]) -> tuple[Argv, ...]:
    """The canonical spellings of what ``argv`` does, other than ``argv`` itself.

    ``takes`` are the options of the program that take a value (to find its verb).
    """
    prog = _program(argv[0])
    if prog.endswith(".py"):  # ./deploy.py runs like python deploy.py
        return (("python", _relative(argv[0], cwd), *argv[1:]),)
    if PYTHON_PROGRAM.fullmatch(prog):
        form = _python(argv, cwd)
        return (form,) if form is not None and form != argv else ()
    if prog == "docker-compose":
        return (("docker", "compose", *argv[1:]),)
    if prog == "service" and len(argv) >= 3 and not argv[1].startswith("-"):
        return (("systemctl", argv[2], argv[1].removesuffix(".service"), *argv[3:]),)
    if argv[0].startswith("/etc/init.d/") and len(argv) >= 2:
        return (("systemctl", argv[1], prog, *argv[2:]),)
    i = verb_index(argv, takes)
    if i is None:
        return ()
    canonical = (prog, *argv[1:])
    if prog == "npm":
        form = _npm(canonical, i)
    elif prog in _DOCKER_LIKE:
        form = _docker(canonical, i)
    elif prog == "git":
        form = _git(canonical, i)
    elif prog == "systemctl":
        return tuple(_systemctl(canonical, i))
    else:
        return ()
    return (form,) if form is not None else ()
