"""What a command means, for deny rules (docs/allowlist.md#what-a-deny-rule-reaches).

A deny rule names an action, not a spelling: ``npm publish *`` must also block
``npm pub`` and ``docker push *`` must block ``docker image push``. :func:`meanings`
rewrites one argv into the canonical spelling of what it does, for the programs
whose equivalences are known here (npm, docker/podman/nerdctl, git, python,
systemctl/service); the deny check matches rules, rewritten the same way, against
those spellings too. Every table is closed and small; a program not listed means
only what it says; other spellings of verbs and git options are ``_spellings``,
docker's are ``_docker``, npm's ``_npm``. A pure leaf: stdlib and those modules.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence

from multiplex.shell.rules._docker import DOCKER_LIKE, compose, docker_push, managed_verb
from multiplex.shell.rules._npm import npm_verb, yarn_in_workspaces
from multiplex.shell.rules._spellings import (
    VERB_ALIASES,
    aliased,
    aws_s3_removal,
    git_options_first,
)

__all__ = ["PYTHON_PROGRAM", "may_rename", "meanings"]

Argv = tuple[str, ...]


_GIT_SAME = {"send-pack": "push", "stage": "add"}
# The interpreters meanings() reads: CPython and PyPy, which takes the same options.
PYTHON_PROGRAM = re.compile(r"(?:python|pypy)(?:[23](?:\.\d+)?)?")
_PIP = re.compile(r"pip(?:[23](?:\.\d+)?)?")
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


def _runs_module(argv: Argv) -> bool:
    """``python … -m MODULE``: the interpreter runs a module, not a script."""
    for word in argv[1:]:
        if not word.startswith("-") or word == "--":
            return False
        if word.startswith("-m") or (not word.startswith("--") and "m" in word[1:].split("X")[0]):
            return True
    return False


def _systemctl(argv: Argv, i: int) -> list[Argv]:
    units = tuple(w.removesuffix(".service") for w in argv[i + 1 :])
    forms = [(*argv[: i + 1], *units)] if units != argv[i + 1 :] else []
    if argv[i] in ("disable", "mask") and "--now" in argv:  # also stops the unit
        forms.append((*argv[:i], "stop", *units))
    return forms


# Programs that are another's drop-in, for what a deny rule names (podman is docker's CLI,
# OpenTofu terraform's, oc kubectl's and kubecolor its wrapper, hub git's, helm3 helm).
_SAME_PROGRAM = {"podman": "docker", "nerdctl": "docker", "tofu": "terraform", "oc": "kubectl",
                 "hub": "git", "buildah": "docker", "podman-compose": "docker-compose",
                 "gmake": "make", "kubecolor": "kubectl", "helm3": "helm",
                 "ipython": "python", "ipython3": "python"}  # fmt: skip
# Publishing to the npm registry through another client is npm publish.
_PUBLISHERS = frozenset({"pnpm", "yarn", "bun"})
_NPX_VALUE = frozenset({"-p", "--package", "-c", "--call", "-w", "--workspace"})
# rm's flags that say what it does, by every spelling; the rest (-v, -i, -d …) are dropped.
_RM_FLAGS = {"-r": "r", "-R": "r", "--recursive": "r", "-f": "f", "--force": "f"}


def _rm(argv: Argv, rule: bool) -> list[Argv]:
    """``rm -r -f x``, ``rm --recursive --force x``, ``rm -Rfv x`` as ``rm -fr x``, ``rm -r
    x`` and ``rm -f x``; a recursive rm counts as forced (with nobody to answer a prompt,
    ``-r`` alone removes what ``-rf`` does)."""
    letters: set[str] = set()
    operands: list[str] = []
    ended = False
    for word in argv[1:]:
        if ended or not word.startswith("-") or word == "-":
            operands.append(word)
        elif word == "--":
            ended = True
        elif word.startswith("--"):
            letters.update(_RM_FLAGS.get(word.partition("=")[0], ""))
        else:
            letters.update(_RM_FLAGS.get("-" + flag, "") for flag in word[1:])
    letters.discard("")
    if rule:  # a rule means all it names: rm -Rf * is rm -fr *
        clusters = ["-" + "".join(sorted(letters))] if letters else [""]
    else:  # a command, each part of what it does: "rm -f *" holds against rm -rf too
        letters |= {"f"} if "r" in letters else set()
        clusters = [c for c in ("-fr", "-r", "-f") if set(c[1:]) <= letters] or [""]
    forms = [("rm", *([c] if c else []), *operands) for c in clusters]
    return [form for form in dict.fromkeys(forms) if form != argv]


def _inner_npx(argv: Argv) -> Argv | None:
    """``npx [options] CMD …`` and ``npm exec|x [options] -- CMD …``: CMD … (``npm@10``,
    a package at a version, is the program ``npm``)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "--":
            i += 1
            break
        i += 2 if argv[i] in _NPX_VALUE else 1
    if i >= len(argv):
        return None
    name, at, _version = argv[i][1:].partition("@")  # @scope/pkg@1: its own first "@"
    return (argv[i][0] + name if at else argv[i], *argv[i + 1 :])


# Release tools that publish the packages to the npm registry (as npm publish does), by the
# words that make them do it: lerna publish, changeset publish, nx release [publish], np,
# release-it, semantic-release (not when told only to try: --dry-run, np's --preview).
_RELEASERS = {"lerna": ("publish",), "changeset": ("publish",), "nx": ("release",), "np": (),
              "release-it": (), "semantic-release": ()}  # fmt: skip


_TRYING = frozenset({"--dry-run", "--preview", "--no-publish", "--skip-publish", "--help", "-h"})


def _released(prog: str, argv: Argv) -> Argv | None:
    words = _RELEASERS[prog]
    if tuple(argv[1 : 1 + len(words)]) != words or _TRYING & set(argv):
        return None
    if prog == "semantic-release" and "-d" in argv:  # its --dry-run
        return None
    after = [w for w in argv[1 + len(words) :] if not w.startswith("-")]
    if prog == "nx" and after[:1] in (["version"], ["changelog"], ["plan"]):  # no publishing
        return None
    return ("npm", "publish")


def _kubectl_removal(argv: Argv, i: int) -> Argv | None:
    """``kubectl replace --force`` (deletes, then creates) and ``kubectl apply --prune``
    (deletes what the files no longer hold) as the ``kubectl delete`` they run."""
    verb, rest = argv[i], argv[i + 1 :]
    if verb == "replace" and ("--force" in rest or "--force=true" in rest):
        drop = ("--force", "--force=true")
    elif verb == "apply" and any(w == "--prune" or w.startswith("--prune=") for w in rest):
        drop = ("--prune", "--prune=true")
    else:
        return None
    return (*argv[:i], "delete", *(w for w in rest if w not in drop))


# The commands that remove what a program's delete verb removes, spelled as that verb.
_REMOVALS = {"kubectl": _kubectl_removal, "aws": aws_s3_removal}
_REGISTRY_PUSH = {"skopeo": "copy", "crane": "push"}
# Commands whose meanings may name another program than their own (the rest keep theirs):
# what a deny check may skip when no rule names the program (shell.rules._deny).
_RENAMING = frozenset(
    {"docker-compose", "service", "npx", "npm", "find", "terragrunt", "uv", "skopeo", "crane", "cargo",
     "pipx", *_SAME_PROGRAM, *_PUBLISHERS, *_RELEASERS}
)  # fmt: skip


# The programs only the verb part of meanings() reads (none of its earlier branches names
# them), and every program some branch names: any other means only what it says.
_VERBS_ONLY = (
    frozenset(
        {"npm", "git", "systemctl", "kubectl", "terraform", "aws", *DOCKER_LIKE, *VERB_ALIASES}
    )
    - _SAME_PROGRAM.keys()
    - _PUBLISHERS
    - {
        "rm",
        "find",
        "npx",
        "cargo",
        "terragrunt",
        "uv",
        "docker-compose",
        "service",
        *_REGISTRY_PUSH,
    }
)
_NAMED = _VERBS_ONLY | _RENAMING | {"rm"}


def _renamed_by_shape(word: str, prog: str) -> bool:
    """A program meanings() reads by the shape of its name: a script, an init script, python
    or pip of some version."""
    return (
        prog.endswith(".py")
        or word.startswith("/etc/init.d/")
        # (every name either pattern matches holds a "p": most programs need no regex)
        or ("p" in prog and (PYTHON_PROGRAM.fullmatch(prog) or _PIP.fullmatch(prog)) is not None)
    )


def may_rename(argv: Sequence[str]) -> bool:
    """:func:`meanings` may give ``argv`` another program's name (python for a script,
    docker for podman, rm for find -delete, the command npx runs …)."""
    prog = _program(argv[0])
    return prog in _RENAMING or _renamed_by_shape(argv[0], prog)


def meanings(
    argv: Argv, *, cwd: str | None, takes: frozenset[str], rule: bool = False
) -> tuple[Argv, ...]:
    """The canonical spellings of what ``argv`` does, other than ``argv`` itself.

    ``takes`` are the options of the program that take a value (to find its verb);
    ``rule`` says ``argv`` is a deny rule's words (it means all it names, where a
    command means each part of what it does).
    """
    prog = _program(argv[0])
    if prog in _VERBS_ONLY and not argv[0].startswith("/etc/init.d/"):
        return _verb_forms(argv, prog, cwd, takes)
    if prog not in _NAMED and not _renamed_by_shape(argv[0], prog):
        return ()  # (most commands: ls, cat, make …) no table names the program
    if prog in _SAME_PROGRAM:  # podman push x means docker push x, then what docker's means
        same = (_SAME_PROGRAM[prog], *argv[1:])
        return (same, *meanings(same, cwd=cwd, takes=takes, rule=rule))
    if prog == "rm":
        return tuple(_rm(argv, rule))
    if prog == "find" and "-delete" in argv and not rule:  # find build -delete: rm -fr build
        starts = [w for w in argv[1:] if w not in ("-H", "-L", "-P")]
        paths = [w for w in starts[: next((k for k, w in enumerate(starts)
                                            if w[:1] in ("-", "(", "!")), len(starts))]]  # fmt: skip
        return tuple(_rm(("rm", "-r", *(paths or ["."])), rule=False))
    if prog == "npx":
        inner = _inner_npx(argv)
        return () if inner is None else (inner, *meanings(inner, cwd=cwd, takes=frozenset()))
    if prog == "yarn" and (inner := yarn_in_workspaces(argv)) is not None:
        return (inner, *meanings(inner, cwd=cwd, takes=takes, rule=rule))
    if prog in _PUBLISHERS and "publish" in argv[1:3]:
        return (("npm", "publish", *argv[argv.index("publish") + 1 :]),)
    if prog in _RELEASERS:
        form = _released(prog, argv)
        return (form,) if form is not None else ()
    if prog == "pipx" and argv[1:2] == ("run",):  # pipx run deploy.py: a local script
        scripts = [w for w in argv[2:] if not w.startswith("-")][:1]
        if scripts and scripts[0].endswith(".py"):
            at = argv.index(scripts[0])
            return (("python", _relative(scripts[0], cwd), *argv[at + 1 :]),)
    if prog == "cargo" and argv[1:2] and argv[1].startswith("+"):  # cargo +nightly publish
        same = ("cargo", *argv[2:])
        return (same, *meanings(same, cwd=cwd, takes=takes, rule=rule))
    if prog in ("skopeo", "crane") and _REGISTRY_PUSH.get(prog) in argv[1:2]:
        # skopeo copy SRC docker://DEST, crane push TAR REF: an image sent to a registry
        dest = [a for a in argv[2:] if not a.startswith("-")][-1:]
        if prog == "skopeo" and not (dest and dest[0].startswith("docker://")):
            return ()  # copied into a local store, not a registry
        return (("docker", "push", *(d.removeprefix("docker://") for d in dest)),)
    if prog == "terragrunt":  # terragrunt [run-all|run --all] VERB runs terraform VERB
        words = [w for w in argv[1:] if w not in ("run-all", "run", "--all", "--")]
        same = ("terraform", *words)
        return (same, *meanings(same, cwd=cwd, takes=takes, rule=rule))
    if prog.endswith(".py"):  # ./deploy.py runs like python deploy.py
        return (("python", _relative(argv[0], cwd), *argv[1:]),)
    if PYTHON_PROGRAM.fullmatch(prog):
        form = _python(argv, cwd)
        if form is None or form == argv:
            return ()
        # python -m pip uninstall x is pip uninstall x (a tool run as its module)
        module = form[1].removesuffix(".py") if _runs_module(argv) else ""
        tool = (module, *form[2:]) if module and "/" not in module else None
        return (form, *((tool, *meanings(tool, cwd=cwd, takes=takes)) if tool else ()))
    if _PIP.fullmatch(prog) and prog != "pip":  # pip3, pip3.12: pip
        return (("pip", *argv[1:]),)
    if prog == "uv" and argv[1:2] == ("pip",):  # uv pip uninstall x: pip uninstall x
        return (("pip", *argv[2:]),)
    if prog == "docker-compose":
        compose = ("docker", "compose", *argv[1:])
        return (compose, *meanings(compose, cwd=cwd, takes=takes, rule=rule))
    if prog == "service" and len(argv) >= 3 and not argv[1].startswith("-"):
        return (("systemctl", argv[2], argv[1].removesuffix(".service"), *argv[3:]),)
    if argv[0].startswith("/etc/init.d/") and len(argv) >= 2:
        return (("systemctl", argv[1], prog, *argv[2:]),)
    return _verb_forms(argv, prog, cwd, takes)


def _verb_forms(argv: Argv, prog: str, cwd: str | None, takes: frozenset[str]) -> tuple[Argv, ...]:
    """What ``argv`` means by its verb: the program's own aliases and equivalent verbs."""
    i = verb_index(argv, takes)
    if i is None:
        return ()
    canonical = (prog, *argv[1:])
    if prog == "npm":
        form = npm_verb(canonical, i)
        verb = form[i] if form is not None else canonical[i]
        if verb == "exec":  # npm exec -- CMD: what CMD means too
            inner = _inner_npx(canonical[i:])
            if inner is not None:
                found = (inner, *meanings(inner, cwd=cwd, takes=frozenset()))
                return (form, *found) if form is not None else found
    elif prog in DOCKER_LIKE:
        managed = managed_verb(canonical, i) or compose(canonical, i)  # image push; compose -f x
        pushed = docker_push(managed or canonical, i)
        return tuple(f for f in (managed, pushed) if f is not None)
    elif prog == "git":  # the alias's words, then each spelling with its options first
        via_alias = _git(canonical, i)
        if via_alias is None:  # (most commands)
            first = git_options_first(canonical, i)
            return () if first is None else (first,)
        at = verb_index(via_alias, takes)
        forms = (via_alias, git_options_first(canonical, i),
                 git_options_first(via_alias, at) if at is not None else None)  # fmt: skip
        return tuple(dict.fromkeys(f for f in forms if f is not None))
    elif prog == "systemctl":
        return tuple(_systemctl(canonical, i))
    elif prog in VERB_ALIASES:
        form = aliased(canonical, i, VERB_ALIASES[prog])
    elif prog in _REMOVALS and (removal := _REMOVALS[prog](canonical, i)) is not None:
        return (removal,)
    elif prog == "terraform" and canonical[i] == "apply" and "-destroy" in canonical:
        rest = [w for w in canonical[i + 1 :] if w != "-destroy"]  # what destroy runs
        return (("terraform", *canonical[1:i], "destroy", *rest),)
    else:
        return ()
    return (form,) if form is not None else ()
