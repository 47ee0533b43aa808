"""Build and package tools told to run a command by an option (docs/security.md#code-carriers).

The readers behind ``shell.carriers._tool_code.carried`` for ``go build -toolexec
CMD``/``go test -exec CMD``, ``cargo --config target.X.runner='CMD'``, ``apt-get -o
APT::Update::Pre-Invoke::=CMD``, ``mvn -Dexec.executable=…``, ``dotnet
-p:PreBuildEvent=CMD``, ``latexmk -pdflatex=CMD``/``-e CODE``, TeX's
``-shell-escape`` and npm settings that name a shell (``npm config set
script-shell CMD``, ``npm pkg set scripts.x=CMD``). Each gives the command as a
payload (checked like a line of its own) and why it runs code (asks in every
mode, never approved by an allow rule). Also pytest: the files its options write,
and code it would load from beyond the project (``-p PLUGIN``, a config or tests
elsewhere, ``addopts``), which no allow rule vouches for. A pure leaf: stdlib and its
fellow leaves.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from multiplex.shell.carriers._runners import Carried, carried_of
from multiplex.shell.parsing._argv import leaves_cwd
from multiplex.shell.parsing._getopt import Parsed, read_options, table

__all__ = [
    "apt_code",
    "cargo_code",
    "dotnet_code",
    "dpkg_code",
    "go_code",
    "latexmk_code",
    "mvn_code",
    "npm_settings",
    "pytest_code",
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


_PYTEST = table(
    "junit-xml= junitxml= debug=? resultlog= result-log= report-log= basetemp= html= "
    "log-file= cov-report= json-report-file= alluredir= pastebin= confcutdir= rootdir= "
    "override-ini= config-file= pyargs",
    "o= k= m= p= c= n=",
)
_PYTEST_INI_WRITES = ("cache_dir", "log_file")  # -o cache_dir=DIR writes there
_PYTEST_WRITES = ("--junit-xml", "--junitxml", "--resultlog", "--result-log", "--report-log",
                  "--basetemp", "--html", "--log-file", "--json-report-file")  # fmt: skip


def pytest_code(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _PYTEST)
    writes = parsed.values(*_PYTEST_WRITES)
    for value in parsed.values("--debug") or (["pytestdebug.log"] if parsed.has("--debug") else []):
        writes.append(value or "pytestdebug.log")
    for setting in parsed.values("-o", "--override-ini"):
        name, _, value = setting.partition("=")
        if name.strip() in _PYTEST_INI_WRITES:
            writes.append(value.strip())
    return Carried(writes=tuple(writes), unknown=_pytest_loads(parsed))


def _pytest_loads(parsed: Parsed) -> str | None:
    """Code pytest would load from beyond the project: a plugin (``-p NAME``, not
    ``no:NAME``), a config, root, test or import path elsewhere, any of those in
    ``-o addopts=``, packages (``--pyargs``)."""
    plugins = [p for p in parsed.values("-p") if not p.startswith("no:")]
    if plugins:
        return f"pytest -p {plugins[0]}"
    elsewhere = [
        v
        for v in parsed.values("-c", "--config-file", "--rootdir", "--confcutdir")
        if leaves_cwd(v)
    ]
    elsewhere += [op for op in parsed.operands if leaves_cwd(op)]
    if elsewhere:
        return f"pytest {elsewhere[0]}"
    for setting in parsed.values("-o", "--override-ini"):
        name, _, value = (part.strip() for part in setting.partition("="))
        if name == "addopts":  # -o addopts='-p evil': the options it adds, read the same way
            try:
                words = shlex.split(value)
            except ValueError:
                return "pytest -o addopts= (unreadable)"
            why = _pytest_loads(read_options(words, _PYTEST))
            if why is not None:
                return why
        elif name in ("pythonpath", "testpaths") and any(leaves_cwd(v) for v in value.split()):
            return f"pytest -o {name}={value}"
    return "pytest --pyargs" if parsed.has("--pyargs") else None
