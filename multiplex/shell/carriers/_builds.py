"""Build and package tools told to run a command by an option (docs/security.md#code-carriers).

The readers behind ``shell.carriers._tool_code.carried`` for ``go build -toolexec
CMD``/``go test -exec CMD``, ``cargo --config target.X.runner='CMD'``, ``apt-get -o
APT::Update::Pre-Invoke::=CMD``, ``mvn -Dexec.executable=…``, ``dotnet
-p:PreBuildEvent=CMD``, ``latexmk -pdflatex=CMD``/``-e CODE``, TeX's
``-shell-escape`` and npm settings that name a shell (``npm config set
script-shell CMD``, ``npm pkg set scripts.x=CMD``). Each gives the command as a
payload (checked like a line of its own) and why it runs code (asks in every
mode, never approved by an allow rule). A pure leaf: stdlib and its fellow leaves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from multiplex.shell.carriers._runners import Carried, carried_of

__all__ = [
    "apt_code",
    "cargo_code",
    "dotnet_code",
    "dpkg_code",
    "go_code",
    "latexmk_code",
    "mvn_code",
    "npm_settings",
    "tex_code",
]

_GO_RUNS = ("exec", "toolexec")
_GO_VERBS = frozenset({"build", "test", "run", "vet", "install", "list", "generate", "get"})


def _flag_values(args: Sequence[str], names: Sequence[str]) -> list[str]:
    """Values of Go-style flags (``-name V``, ``--name V``, ``-name=V``, ``--name=V``)."""
    found: list[str] = []
    for i, arg in enumerate(args):
        name, eq, value = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or name not in names:
            continue
        if eq:
            found.append(value)
        elif i + 1 < len(args):
            found.append(args[i + 1])
    return found


def go_code(args: Sequence[str], fed: str | None) -> Carried:
    """``go test -exec CMD``, ``go build -toolexec CMD``, ``go env -w GOFLAGS=-toolexec=…``;
    ``go generate`` runs the directives of the package's files (never allowlisted)."""
    verb = args[0] if args else ""
    payloads = _flag_values(args[1:], _GO_RUNS) if verb in _GO_VERBS else []
    if verb == "env" and any(a == "-w" for a in args):
        for setting in args[1:]:
            name, _, value = setting.partition("=")
            if name in ("GOFLAGS", "CC", "CXX", "GOTOOLCHAIN", "GOENV", "PKG_CONFIG"):
                payloads.extend(_flag_values(value.split(), _GO_RUNS) or [value])
    unknown = "go generate runs its files' directives" if verb == "generate" else None
    runs = "go runs a command" if payloads else None
    return carried_of(payloads, runs, unknown)


_CARGO_RUNS = re.compile(
    r"(?:runner|rustc-wrapper|rustc-workspace-wrapper|linker|rustc|rustdoc|ar)\s*$"
)


def cargo_code(args: Sequence[str], fed: str | None) -> Carried:
    """``cargo --config 'target.x.runner="CMD"'``: a program cargo runs; a config file
    given by path is read unseen."""
    payloads: list[str] = []
    files = False
    for value in _flag_values(args, ("config",)):
        key, eq, setting = value.partition("=")
        if not eq:
            files = True
        elif _CARGO_RUNS.search(key.strip()):
            payloads.append(setting.strip().strip("'\"[]").replace('", "', " "))
    return carried_of(
        payloads,
        "cargo --config runs a program" if payloads else None,
        "cargo --config file" if files else None,
    )


_APT_HOOK = re.compile(r"(?:pre|post)-invoke|pre-install-pkgs|::options|::path", re.IGNORECASE)


def apt_code(args: Sequence[str], fed: str | None) -> Carried:
    """``apt-get -o APT::Update::Pre-Invoke::=CMD``, ``-o DPkg::Post-Invoke::=CMD``."""
    settings = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--option")]
    settings += [a[2:] for a in args if a.startswith("-o") and len(a) > 2 and a[2] != "-"]
    settings += [a.partition("=")[2] for a in args if a.startswith("--option=")]
    payloads = []
    for setting in settings:
        key, _, value = setting.partition("=")
        if _APT_HOOK.search(key):
            payloads.append(value)
    config = any(a in ("-c", "--config-file") or a.startswith("--config-file=") for a in args)
    return carried_of(
        payloads,
        "apt runs a hook command" if payloads else None,
        "apt -c config file" if config else None,
    )


def dpkg_code(args: Sequence[str], fed: str | None) -> Carried:
    """``dpkg --pre-invoke=CMD``, ``--post-invoke=CMD``: run around the action, as root."""
    hooks = ("--pre-invoke", "--post-invoke")
    payloads = [a.partition("=")[2] for a in args if a.startswith(tuple(h + "=" for h in hooks))]
    payloads += [args[i + 1] for i, a in enumerate(args[:-1]) if a in hooks]
    return carried_of(payloads, "dpkg runs a hook command" if payloads else None)


def mvn_code(args: Sequence[str], fed: str | None) -> Carried:
    """``mvn exec:exec -Dexec.executable=rm -Dexec.args='-rf /'``: that program, those args."""
    props = dict(a[2:].partition("=")[::2] for a in args if a.startswith("-D"))
    program = props.get("exec.executable", "")
    if not program:
        return Carried()
    line = f"{program} {props.get('exec.args', '')}".strip()
    return Carried((line,), "mvn exec runs a program")


_BUILD_EVENTS = re.compile(r"^(?:/|-{1,2})p(?:roperty)?:(?:Pre|Post)BuildEvent=", re.IGNORECASE)


def dotnet_code(args: Sequence[str], fed: str | None) -> Carried:
    """``dotnet msbuild -p:PreBuildEvent=CMD`` (also ``/p:``, ``--property:``)."""
    payloads = [a.partition("=")[2] for a in args if _BUILD_EVENTS.match(a)]
    return carried_of(
        payloads,
        "a build event runs a command" if payloads else None,
    )


_LATEX_COMMANDS = ("latex", "pdflatex", "lualatex", "xelatex", "dvipdf", "ps2pdf", "pdf_previewer",
                   "dvi_previewer", "ps_previewer", "print_type", "makeindex", "bibtex", "biber")  # fmt: skip


def latexmk_code(args: Sequence[str], fed: str | None) -> Carried:
    """``latexmk -pdflatex=CMD`` names the command it runs; ``-e CODE`` is Perl."""
    payloads = [
        a.partition("=")[2]
        for a in args
        if a.startswith("-") and a.lstrip("-").partition("=")[0] in _LATEX_COMMANDS and "=" in a
    ]
    code = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--e")]
    loads = any(a in ("-r", "--r") for a in args)
    tex = tex_code(args, fed)
    runs = "latexmk runs a command" if payloads or code else tex.runs
    return Carried(
        tuple(p.replace("%O", "").replace("%S", "") for p in payloads if p.strip()),
        runs,
        "latexmk -r rc file" if loads else tex.unknown,
        scripts=tuple(code),
    )


def tex_code(args: Sequence[str], fed: str | None) -> Carried:
    """``pdflatex -shell-escape``: the document's ``\\write18`` runs commands (unseen)."""
    if any(a.lstrip("-") in ("shell-escape", "enable-write18") for a in args):
        why = "TeX with -shell-escape runs the document's commands"
        return Carried(runs=why, unknown=why)
    return Carried()


_NPM_SHELL_KEYS = ("script-shell", "shell", "node-options", "git", "editor", "browser")


def npm_settings(args: Sequence[str]) -> tuple[list[str], bool]:
    """``npm config set script-shell CMD``, ``npm pkg set scripts.x=CMD``: the command a
    later npm run runs, and whether the line sets one."""
    words = [a for a in args if not a.startswith("-")]
    if words[:2] == ["config", "set"] or words[:1] == ["set"]:
        rest = words[2:] if words[0] == "config" else words[1:]
        pairs = [w.partition("=") for w in rest]
        if len(rest) == 2 and "=" not in rest[0]:
            pairs = [(rest[0], "=", rest[1])]
        found = [v for k, _, v in pairs if k in _NPM_SHELL_KEYS]
        return found, bool(found)
    if words[:1] == ["set-script"] and len(words) > 2:  # npm 7: npm set-script NAME CMD
        return [words[2]], True
    if words[:2] == ["pkg", "set"]:
        found = [v for k, _, v in (w.partition("=") for w in words[2:]) if k.startswith("scripts.")]
        return found, bool(found)
    return [], False
