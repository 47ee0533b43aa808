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
from multiplex.shell.detection.paths._writes import all_commands, evidence
from multiplex.shell.parsing._argv import ASSIGN, leaves_cwd, option_values, program_name
from multiplex.shell.parsing._parsed import ParsedLine, SimpleCommand
from multiplex.shell.parsing.runs._payloads import COMMAND_VARIABLES, TOOLCHAIN_VARIABLES

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
        # other languages' module paths and start-up code, libraries loaded by name
        *("PYTHONHOME", "RUBYLIB", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "PERLLIB"),
        *("AWKPATH", "AWKLIBPATH", "TCLLIBPATH", "LUA_PATH", "LUA_CPATH", "LUA_INIT"),
        *("LUA_PATH_5_4", "LUA_CPATH_5_4", "LUA_INIT_5_4", "CLASSPATH", "GCONV_PATH"),
        *("PHPRC", "PHP_INI_SCAN_DIR", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON"),
        *("R_ENVIRON_USER", "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES"),
        # start-up files and settings read from elsewhere (a lesskey file sets LESSOPEN)
        *("HOME", "ZDOTDIR", "FPATH", "VIMINIT", "GVIMINIT", "EXINIT", "LESSKEY"),
        *("LESSKEYIN", "PIP_CONFIG_FILE", "GIT_DIR", "GIT_COMMON_DIR", "CURL_HOME", "WGETRC"),
        "SYSTEMWGETRC",  # curl's and wget's settings: where they write, what they send
        # yarn's and cargo's settings from elsewhere (yarnPath, a rustc wrapper), CMake's
        # compiler launchers (a program run before each compile)
        *("YARN_RC_FILENAME", "CARGO_HOME", "CMAKE_C_COMPILER_LAUNCHER"),
        *("CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_CUDA_COMPILER_LAUNCHER"),
        "GIT_SSL_NO_VERIFY",  # TLS not checked: whoever answers is trusted
    ]
)
# TLS checked against another CA: one of the system's own stores is not another.
_CA_BUNDLES = frozenset({"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
                         "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                         "PIP_CERT"})  # fmt: skip
_SYSTEM_CAS = ("/etc/ssl/", "/etc/pki/", "/etc/ca-certificates", "/usr/share/ca-certificates/",
               "/usr/local/share/ca-certificates/")  # fmt: skip
# Variables turning TLS checks off with one of these values (NODE_TLS_REJECT_UNAUTHORIZED=0).
_TLS_OFF = {"NODE_TLS_REJECT_UNAUTHORIZED": ("0",), "PYTHONHTTPSVERIFY": ("0",)}
# A proxy for the command's traffic (git's http.proxy on the environment): beyond
# loopback, what it fetches and sends passes through another host.
_PROXIES = frozenset({"http_proxy", "https_proxy", "all_proxy", "ftp_proxy"})
# Compiler and linker flags in the environment that load a plugin or run another program.
_FLAGS = frozenset({"CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CGO_CFLAGS", "CGO_CXXFLAGS"})
_FLAGS |= {"CGO_LDFLAGS", "CGO_CPPFLAGS", "FFLAGS"}
_FLAG_LOADS = re.compile(r"-fplugin|--plugin|-wrapper\b|-specs|(?:^|[\s,])-B\s*[/~.$]")
_LOOPBACK = re.compile(r"^(?:\w+://)?(?:[^@/]*@)?(?:localhost|127\.[\d.]+|\[::1\])(?::\d+)?/?$")
# Code found by a path, asked about when the path lies beyond the working folder: the
# user's site-packages (its .pth files), extra makefiles, a CMake toolchain, a
# kubeconfig (its exec plugins; the usual ~/.kube/ ones are the user's own), terminfo.
_PATH_LOADERS = frozenset(
    {"PYTHONUSERBASE", "MAKEFILES", "CMAKE_TOOLCHAIN_FILE", "KUBECONFIG", "TERMINFO"}
)
_USUAL_KUBECONFIG = ("~/.kube/", "$HOME/.kube/", "${HOME}/.kube/")
# Prompts a shell expands each time it shows them (PS4 before each traced command).
_PROMPTS = frozenset({"PS0", "PS1", "PS2", "PS4"})
# JVM tools' options: an agent or an error hook runs code of the value's choosing.
_JVM_OPTS = frozenset(["MAVEN_OPTS", "GRADLE_OPTS", "ANT_OPTS", "SBT_OPTS", "JAVA_OPTS"])
_JVM_HOOK = re.compile(r"-(?:javaagent|agentpath|agentlib)|OnError|OnOutOfMemoryError")
# Options in a value that make go or rustc run another program.
_RUNS_A_PROGRAM = {
    "GOFLAGS": re.compile(r"-(?:toolexec|exec)\b"),
    "RUSTFLAGS": re.compile(r"linker|link-arg|plugin|-Z"),
    "CARGO_ENCODED_RUSTFLAGS": re.compile(r"linker|link-arg|plugin|-Z"),
}
# A compiler's (or binutil's) bare name, versioned or for a target: CC=gcc-12,
# CC=aarch64-linux-gnu-gcc, AR=llvm-ar. Anything else in CC … is a command.
_TOOLCHAIN = re.compile(
    r"(?:/usr(?:/local)?/bin/|/bin/)?(?:[\w.+-]{1,64}-)?"
    r"(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|tcc|icc|icx|icpx|cpp|ld|ld\.\w+|ar|as|nm|ranlib"
    r"|strip|objcopy|objdump|gfortran|f77|f95|nvcc|zig cc|zig c\+\+)(?:-\d{1,4}(?:\.\d{1,4}){0,3})?"
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
    elif cmd.argv and cmd.program in _KUBE_TOOLS:  # --kubeconfig F reads F as KUBECONFIG=F does
        found += ["KUBECONFIG=" + v for v in option_values(cmd.argv[1:], ("--kubeconfig",))]
    return found


_KUBE_TOOLS = frozenset({"kubectl", "oc", "helm", "k9s", "kubectx", "kubens", "stern"})


def _loads_code(word: str) -> bool:
    name, _, value = word.partition("=")
    if name in _LOADERS or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
        return True
    if _NPM_ENV.match(name) or (name.startswith("CARGO_TARGET_") and name.endswith("_RUNNER")):
        return True
    if name in ("MAKEFLAGS", "GNUMAKEFLAGS", "MFLAGS") and ("eval" in value or "-E" in value):
        return True
    if name in _PATH_LOADERS:
        entries = value.replace(":", " ").split()
        return any(leaves_cwd(e) and not e.startswith(_USUAL_KUBECONFIG) for e in entries)
    if name in _PROMPTS:  # PS4='$(cmd)' bash -x: a substitution run at each prompt
        return "$(" in value or "`" in value
    if name == "PATH":
        entries = value.split(":")
        return any(not e or not e.startswith(("/", "$", "~")) for e in entries)
    if name in _JVM_OPTS:
        return bool(_JVM_HOOK.search(value))
    if name in _RUNS_A_PROGRAM:
        return bool(_RUNS_A_PROGRAM[name].search(value))
    if name in _CA_BUNDLES:
        return bool(value.strip()) and not value.strip().startswith(_SYSTEM_CAS)
    if name in _TLS_OFF:
        return value.strip() in _TLS_OFF[name]
    if name.lower() in _PROXIES:
        return bool(value.strip()) and _LOOPBACK.match(value.strip()) is None
    if name in _FLAGS:
        return bool(_FLAG_LOADS.search(value))
    if name == "DOCKER_HOST":  # its commands, and the registry logins a pull hands over
        return value.startswith(("tcp://", "ssh://")) and _LOOPBACK.match(value) is None
    if name == "PYTHONWARNINGS":  # a dotted category is imported: ignore::evil.Warning
        return any("." in [*entry.split(":"), "", ""][2] for entry in value.split(","))
    if name in TOOLCHAIN_VARIABLES:
        return not _TOOLCHAIN.fullmatch(value.strip())
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
