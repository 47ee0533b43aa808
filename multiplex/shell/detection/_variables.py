"""Variables set on a line that make a program load or run other code (docs/security.md#named-patterns).

``LD_PRELOAD``, ``BASH_ENV``, ``NODE_OPTIONS``, a JVM's or .NET's start-up hooks,
``TAR_OPTIONS``, configs read from elsewhere, npm settings given as
``npm_config_*``, cargo's runners and wrappers; a ``PATH`` with a relative entry;
the value of a command variable (``GIT_PAGER``, ``EDITOR`` …) unless it is a plain
pager or editor. Set as a prefix, through ``env``/``export``/``declare`` …. A
pure leaf: stdlib and the shell leaves it imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from multiplex.shell.detection._catalogue import COMMAND_VARIABLE, Finding
from multiplex.shell.detection._writes import all_commands, evidence
from multiplex.shell.parsing._argv import ASSIGN, program_name
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand
from multiplex.shell.parsing._payloads import COMMAND_VARIABLES

__all__ = [
    "DECLARE",
    "each_command_variable",
    "find_command_variable",
    "loads_code_safely",
]

# Programs that set a variable for what they run, or for the shell.
DECLARE = frozenset({"env", "sudo", "export", "declare", "typeset", "local", "readonly"})
_LOADERS = frozenset(
    [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "NODE_OPTIONS",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "GIT_EXEC_PATH",
        "GIT_TEMPLATE_DIR",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        # a debugger's, a JVM's or .NET's start-up code, tar's options, configs from elsewhere
        *("PERL5DB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"),
        *("DOTNET_STARTUP_HOOKS", "TAR_OPTIONS", "XDG_CONFIG_HOME", "RUSTC_WRAPPER"),
        *("RUSTC_WORKSPACE_WRAPPER", "RUSTC", "CARGO_BUILD_RUSTC_WRAPPER"),
    ]
)
# npm reads any setting from npm_config_NAME (either case): these run a program.
_NPM_ENV = re.compile(
    r"npm_config_(?:script[-_]shell|shell|node[-_]options|userconfig|globalconfig|git|editor"
    r"|browser|prefix)$",
    re.IGNORECASE,
)
_BENIGN_COMMANDS = frozenset(
    [
        "cat",
        "less",
        "more",
        "most",
        "head",
        "tail",
        "true",
        "vi",
        "vim",
        "nvim",
        "nano",
        "emacs",
        "code",
        "delta",
        "bat",
    ]
)


def _assignments(cmd: SimpleCommand) -> list[str]:
    found = list(cmd.assignments)
    if cmd.argv and cmd.program in DECLARE:
        found += [w.replace("'", "").replace('"', "") for w in cmd.argv[1:] if ASSIGN.match(w)]
    return found


def _loads_code(word: str) -> bool:
    name, _, value = word.partition("=")
    if name in _LOADERS or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
        return True
    if _NPM_ENV.match(name) or (name.startswith("CARGO_TARGET_") and name.endswith("_RUNNER")):
        return True
    if name in ("MAKEFLAGS", "GNUMAKEFLAGS", "MFLAGS") and ("eval" in value or "-E" in value):
        return True
    if name == "PATH":
        entries = value.split(":")
        return any(not e or not e.startswith(("/", "$", "~")) for e in entries)
    if name in COMMAND_VARIABLES and value.strip():
        first = value.split()[0] if value.split() else ""
        plain = not re.search(r"[;&|`$<>()]", value)
        return not (plain and program_name(first) in _BENIGN_COMMANDS)
    return False


def loads_code_safely(command: str) -> bool:
    """A pager or editor like ``less`` alone: the value runs nothing else."""
    words = command.split()
    plain = not re.search(r"[;&|`$<>()]", command)
    return plain and bool(words) and program_name(words[0]) in _BENIGN_COMMANDS


def each_command_variable(parsed: ParsedLine) -> Iterator[Finding]:
    """Each variable set on the line that makes a program load or run other code."""
    for cmd in all_commands(parsed):
        if any(_loads_code(w) for w in _assignments(cmd)):
            yield Finding(COMMAND_VARIABLE, evidence(cmd), cmd.text)


def find_command_variable(parsed: ParsedLine) -> Finding | None:
    """A variable set on the line that makes a program load or run other code."""
    return next(each_command_variable(parsed), None)
