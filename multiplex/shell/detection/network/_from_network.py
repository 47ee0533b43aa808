"""Code run straight from the network: a program, a package run or installed from a URL or a
forge rather than a registry (``download-exec``, docs/security.md#named-patterns).

``deno run https://…``, ``npx github:u/r`` and ``uvx --from git+https://…`` run what they
fetch; ``pip install https://…/x.tar.gz``, ``npm install github:u/r``, ``pipx install
git+https://…`` and ``cargo install --git URL`` build and install it, which runs its code
(setup.py or a build backend, npm's install scripts, build.rs) there and then. A package
of the registry (``pip install requests``, ``npx prettier``) and ``go install`` are not.
A pure leaf: the parsed command and the argv readers.
"""

from __future__ import annotations

import re

from multiplex.shell.parsing._argv import operands, positional
from multiplex.shell.parsing._parsed import SimpleCommand

__all__ = ["FROM_THE_NETWORK", "runs_from_the_network"]

# A package spec fetched from a forge or a URL rather than a registry: npx github:u/r,
# npx u/r (GitHub's shorthand), git+https://…, a tarball URL.
_REMOTE_PACKAGE = re.compile(
    r"^(?:github:|gitlab:|bitbucket:|gist:|git\+|git:|https?:|ftp:|file:)|^[\w.-]+/[\w.-]+(?:#\S*)?$"
)
_PACKAGE_RUNNERS = {"npx": (), "bunx": (), "uvx": ("--from",), "pipx": ("--spec",)}
# Installers of a package spec, by the verbs that install (pip's specs are never u/r).
_INSTALLERS = {"pip": ("install",), "npm": ("install", "i", "add"), "pnpm": ("install", "i", "add"),
               "yarn": ("add",), "bun": ("add", "install", "i"), "poetry": ("add",),
               "pdm": ("add",), "pipenv": ("install",)}  # fmt: skip
_PIP_FORMS = frozenset({"pip", "poetry", "pdm", "pipenv"})  # specs in pip's forms, not u/r
_URL_PACKAGE = re.compile(r"^(?:[\w.\[\],-]+\s*@\s*)?(?:git\+|https?:|ftp:|hg\+|svn\+|bzr\+)")
_PIP = re.compile(r"pip[0-9.]*")
_MODULE = re.compile(r"-[A-Za-z]*m")  # python -m, -Im, -Bm …: the module follows
FROM_THE_NETWORK = frozenset(
    {"deno", "bun", "go", "uv", "cargo", "pip3", "pre-commit", *_PACKAGE_RUNNERS, *_INSTALLERS}
)


def _installs_from_the_network(prog: str, args: list[str]) -> bool:
    """``pip install https://…``, ``pip install name@git+https://…``, ``npm install
    github:u/r``, ``pipx install git+…``, ``uv pip install URL``, ``uv add git+…``,
    ``poetry add git+…``, ``cargo install --git URL``: a package built and installed (its
    code run) from a URL or a forge. An index or a registry named by an option is a
    registry (``--index-url``, ``--registry``): not judged."""
    if prog == "cargo":
        return operands(args)[:1] == ["install"] and any(
            a.partition("=")[0] == "--git" for a in args
        )
    if prog.startswith("python"):  # python -m pip …, python -Im pip …
        at = next((i for i, a in enumerate(args[:-1]) if _MODULE.fullmatch(a)), None)
        if at is None or not _PIP.fullmatch(args[at + 1]):
            return False
        prog, args = "pip", args[at + 2 :]
    if _PIP.fullmatch(prog):
        prog = "pip"
    ops = positional(args, _PIP_VALUES | _NPM_VALUES)
    if prog == "uv":  # uv pip install, uv add, uv tool install; uv run --with PACKAGE
        withs = [a.partition("=")[2] if "=" in a else "" for a in args if a.startswith("--with")]
        withs += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--with"]
        if any(_URL_PACKAGE.match(w) for w in withs):
            return True
        verb = ops[1:2] if ops[:1] in (["pip"], ["tool"]) else ops[:1]
        return verb in (["install"], ["add"]) and any(_URL_PACKAGE.match(o) for o in ops[1:])
    if prog == "pipx" and ops[:1] in (["install"], ["inject"]):
        return any(_URL_PACKAGE.match(o) for o in ops[1:])
    if prog not in _INSTALLERS or ops[:1] not in [[v] for v in _INSTALLERS[prog]]:
        return False
    if prog in _PIP_FORMS:
        return any(_URL_PACKAGE.match(o) for o in ops[1:])
    return any(
        _REMOTE_PACKAGE.match(o) for o in ops[1:] if not o.startswith(("@", ".", "/", "~", "file:"))
    )


# pip's options whose value follows (an index, a constraint, a folder): never a spec.
_PIP_VALUES = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--proxy", "-c",
     "--constraint", "-r", "--requirement", "-t", "--target", "--prefix", "--root", "--src",
     "--trusted-host", "--cert", "--client-cert", "--cache-dir", "--log", "--python-version",
     "--platform", "--implementation", "--abi", "--progress-bar", "--retries", "--timeout",
     "--exists-action", "--global-option", "--config-settings", "--only-binary",
     "--no-binary", "--upgrade-strategy", "--report", "--python", "--group", "--extra",
     "--source"}
)  # fmt: skip
# npm's (and pnpm's, yarn's, bun's) options whose value follows: never a package spec.
_NPM_VALUES = frozenset(
    {"--prefix", "-C", "--registry", "--workspace", "-w", "--tag", "--userconfig", "--cache",
     "--globalconfig", "--loglevel", "--omit", "--include", "--save-prefix", "--script-shell",
     "--install-strategy", "--filter", "-F", "--dir", "--cwd", "--cafile", "--ca", "--cert",
     "--key", "--otp"}
)  # fmt: skip


def runs_from_the_network(cmd: SimpleCommand) -> bool:
    """A program run straight from a URL, a forge or a remote module: ``deno run https://…``,
    ``bun run https://…``, ``go run example.com/x@latest``, ``npx github:u/r``, ``npx u/r``,
    ``uvx --from git+https://…``, ``pipx run --spec git+https://…``; or a package installed
    from one (:func:`_installs_from_the_network`)."""
    prog, args = cmd.program, cmd.argv[1:]  # (the caller asks only of FROM_THE_NETWORK)
    if _installs_from_the_network(prog, list(args)):
        return True
    ops = operands(args)
    if prog == "pre-commit":  # pre-commit try-repo URL: the hooks of a repository it clones
        return ops[:1] == ["try-repo"] and any("://" in o or o.startswith("git@") for o in ops[1:2])
    if prog in ("deno", "bun"):
        url = ops[1:2] if ops[:1] in (["run"], ["x"]) else ops[:1]
        return any(o.startswith(("https://", "http://")) for o in url)
    if prog == "go":
        return ops[:1] == ["run"] and any("@" in o for o in ops[1:2])  # (install runs nothing)
    if prog == "uv" and ops[:2] == ["tool", "run"]:
        prog, args = "uvx", args[args.index("run") + 1 :]
    if prog == "pipx" and ops[:1] != ["run"]:
        return False
    if prog not in _PACKAGE_RUNNERS:
        return False
    specs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in _PACKAGE_RUNNERS[prog]]
    specs += [a.partition("=")[2] for a in args if a.partition("=")[0] in _PACKAGE_RUNNERS[prog]]
    if prog in ("npx", "bunx"):
        specs += ops[:1] + [a.partition("=")[2] for a in args if a.startswith("--package=")]
    return any(_REMOTE_PACKAGE.match(s) for s in specs if not s.startswith("@"))
