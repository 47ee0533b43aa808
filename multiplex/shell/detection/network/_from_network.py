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

from multiplex.shell.parsing._argv import operands
from multiplex.shell.parsing._parsed import SimpleCommand

__all__ = ["FROM_THE_NETWORK", "runs_from_the_network"]

# A package spec fetched from a forge or a URL rather than a registry: npx github:u/r,
# npx u/r (GitHub's shorthand), git+https://…, a tarball URL.
_REMOTE_PACKAGE = re.compile(
    r"^(?:github:|gitlab:|bitbucket:|gist:|git\+|git:|https?:|ftp:|file:)|^[\w.-]+/[\w.-]+(?:#\S*)?$"
)
_PACKAGE_RUNNERS = {"npx": (), "bunx": (), "uvx": ("--from",), "pipx": ("--spec",)}
# Installers of a package spec, by the verbs that install (pip's specs are never u/r).
_INSTALLERS = {"pip": ("install",), "pip3": ("install",), "npm": ("install", "i", "add"),
               "pnpm": ("install", "i", "add"), "yarn": ("add",), "bun": ("add", "install", "i")}  # fmt: skip
_URL_SPEC = re.compile(r"^(?:[\w.-]+\s*@\s*)?(?:git\+|https?:|ftp:|hg\+|svn\+|bzr\+)")
FROM_THE_NETWORK = frozenset({"deno", "bun", "go", "uv", "cargo", *_PACKAGE_RUNNERS, *_INSTALLERS})


def _installs_from_the_network(prog: str, args: list[str]) -> bool:
    """``pip install https://…``, ``pip install name@git+https://…``, ``npm install
    github:u/r``, ``pipx install git+…``, ``uv pip install URL``, ``cargo install --git URL``:
    a package built and installed (its code run) from a URL or a forge."""
    ops = operands(args)
    if prog == "cargo":
        return ops[:1] == ["install"] and any(a == "--git" or a.startswith("--git=") for a in args)
    if prog == "uv" and ops[:2] == ["pip", "install"]:
        prog, ops = "pip", ops[1:]
    if prog.startswith("python") and args[:2] == ["-m", "pip"]:
        prog, ops = "pip", operands(args[2:])
    if prog == "pipx" and ops[:1] == ["install"]:
        prog = "pip"
    if prog not in _INSTALLERS or ops[:1] not in [[v] for v in _INSTALLERS[prog]]:
        return prog == "pip" and ops[:1] == ["install"] and any(_URL_SPEC.match(o) for o in ops[1:])
    if prog.startswith("pip"):
        return any(_URL_SPEC.match(o) for o in ops[1:])
    specs = [a for i, a in enumerate(args) if i == 0 or args[i - 1] not in _NPM_VALUES]
    return any(
        _REMOTE_PACKAGE.match(o)
        for o in operands(specs)[1:]
        if not o.startswith(("@", ".", "/", "~"))
    )


# npm's (and pnpm's, yarn's, bun's) options whose value follows: never a package spec.
_NPM_VALUES = frozenset(
    {"--prefix", "-C", "--registry", "--workspace", "-w", "--tag", "--userconfig", "--cache",
     "--globalconfig", "--loglevel", "--omit", "--include", "--save-prefix", "--script-shell",
     "--install-strategy", "--filter", "--dir", "--cwd"}
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
