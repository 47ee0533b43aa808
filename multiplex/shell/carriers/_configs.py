"""Tools told to load code, or a configuration that loads code, from beyond the working
folder (docs/allowlist.md#what-an-allow-rule-never-covers).

``eslint -c /tmp/x.js`` runs that file (its config is JavaScript), ``prettier --plugin``,
``jest --config``'s ``globalSetup``, ``gradle -I`` (an init script), ``mvn
-Dmaven.ext.class.path=`` (an extension), ``helm --post-renderer`` (a program),
``kubectl --kubeconfig`` (its ``exec`` plugins), ``rake -f``, ``cmake -P``, ``tox
--installpkg``, ``pre-commit -c``, ``mypy --config-file`` (its ``plugins``), an
``ansible-playbook`` elsewhere: an allow rule for the tool vouches for the project's own
files, not for those, as for pytest's (``shell.carriers._builds``). Each is told where
the file lies; one inside the working folder is the project's. A pure leaf.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from multiplex.shell.carriers._runners import NOTHING, Carried
from multiplex.shell.parsing._argv import leaves_cwd, operands, option_values

__all__ = ["CONFIG_OPTIONS", "CONFIG_READERS", "loads_from_elsewhere"]

_GRADLE = ("-I", "--init-script", "-c", "--settings-file", "-b", "--build-file")
CONFIG_OPTIONS: dict[str, tuple[str, ...]] = {
    "eslint": ("-c", "--config", "--rulesdir", "--resolve-plugins-relative-to", "--plugin"),
    "prettier": ("--plugin", "--config", "--plugin-search-dir"),
    "jest": ("-c", "--config", "--setupFiles", "--globalSetup", "--globalTeardown",
             "--testRunner", "--transform", "--rootDir"),
    "vitest": ("-c", "--config", "--root", "--dir"),
    "webpack": ("-c", "--config"), "rollup": ("-c", "--config"), "vite": ("-c", "--config"),
    "babel": ("--config-file",),
    "gradle": _GRADLE, "gradlew": _GRADLE,
    "mvn": ("-f", "--file", "-s", "--settings", "-gs", "--global-settings",
            "-Dmaven.ext.class.path"),
    "helm": ("--post-renderer", "--kubeconfig"),
    "kubectl": ("--kubeconfig",), "oc": ("--kubeconfig",),
    "rake": ("-f", "--rakefile", "-I", "--libdir", "-r", "--require", "-R", "--rakelibdir"),
    "cmake": ("-P", "-C", "--toolchain", "-DCMAKE_TOOLCHAIN_FILE", "-DCMAKE_C_COMPILER",
              "-DCMAKE_CXX_COMPILER", "-DCMAKE_C_COMPILER_LAUNCHER", "-DCMAKE_CXX_COMPILER_LAUNCHER"),
    "tox": ("-c", "--conf", "--installpkg", "--root"),
    "pre-commit": ("-c", "--config"),
    "mypy": ("--config-file",),
    "ansible-playbook": ("-i", "--inventory"),
}  # fmt: skip


def loads_from_elsewhere(prog: str, args: Sequence[str]) -> str | None:
    """Why ``prog ARGS`` loads code from beyond the working folder, or None."""
    names = CONFIG_OPTIONS.get(prog)
    if names is None:
        return None
    values = option_values(args, names)
    if prog == "ansible-playbook":  # its playbooks are its operands
        values += operands(args)
    elif prog == "pre-commit" and operands(args)[:1] == ["try-repo"]:  # its hooks run
        values += operands(args)[1:2]
    elsewhere = [v for v in values if v and leaves_cwd(v)]
    return f"{prog} loads {elsewhere[0]} from beyond the working folder" if elsewhere else None


def _reader(prog: str, args: Sequence[str], fed: str | None) -> Carried:
    why = loads_from_elsewhere(prog, args)
    return Carried(unknown=why) if why is not None else NOTHING


# The readers of the programs no other carrier reads (mvn's and rake's add this to theirs).
CONFIG_READERS: dict[str, Callable[[Sequence[str], str | None], Carried]] = {
    prog: functools.partial(_reader, prog) for prog in CONFIG_OPTIONS if prog not in ("mvn", "rake")
}
