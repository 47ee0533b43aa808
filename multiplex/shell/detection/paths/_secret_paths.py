"""Which paths are secrets, home roots or places where code runs later (docs/security.md#named-patterns).

Paths are compared in ``~/…`` form: an absolute path under one of the place's
homes is rewritten relative to ``~`` first. Globs are ``fnmatch`` patterns over
the whole normalised path. A pure leaf: stdlib and ``shell.detection._targets``.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Sequence

from multiplex._literals import LiteralSearch
from multiplex.shell.detection.paths._credential_stores import SECRET_KEYS, SECRETS
from multiplex.shell.detection.paths._targets import Place, candidates

__all__ = [
    "MAY_SECRET_WORDS",
    "PERSISTENCE_KEYS",
    "SHELL_START_UP",
    "STARTUP",
    "is_home_root",
    "is_persistence_path",
    "is_secret_path",
    "may_be_secret",
    "may_hold_secret",
    "persistence_key",
    "resolved",
    "secret_by_folder",
]

_SECRETS = SECRETS  # the stores themselves: _credential_stores.py
# A private key, a keystore or a secrets file anywhere, by its name; terraform's state (it
# holds secrets in clear; its .tfvars are left out: every plan names them). Matched on the
# last component alone (one regex, tried only on names with one of _NAMED_ENDS), as
# patterns they are glob examples too ("cat ./*.key").
_BY_NAME = (
    "*/id_rsa", "*/id_dsa", "*/id_ecdsa", "*/id_ed25519", "*.key", "*.p12", "*.pfx", "*.jks",
    "*.keystore", "*privkey*.pem", "*private*.pem", "key.pem", "*-key.pem", "*_key.pem",
    "*.key.pem", "*secrets.yaml",
    "*secrets.yml", "*secrets.json", "*.tfstate", "*.tfstate.backup",
    # wrangler's .dev.vars, direnv's exports, Google's OAuth client and its quickstarts' token
    "*secrets.toml", "*/.secrets", "*/.dev.vars", "*/.envrc", "*/client_secret*.json",
    "*/credentials.json", "*/token.json",
)  # fmt: skip
_NAMED = re.compile(
    r"(?:id_(?:rsa|dsa|ecdsa|ed25519)|.*\.(?:key|p12|pfx|jks|keystore|tfstate|tfstate\.backup)"
    r"|.*(?:privkey|private).*\.pem|(?:.*[-_.])?key\.pem|.*secrets\.(?:yaml|yml|json|toml)"
    r"|\.secrets|\.dev\.vars|\.envrc|client_secret.*\.json|credentials\.json|token\.json)"
)
_NAMED_ENDS = ("_rsa", "_dsa", "_ecdsa", "_ed25519", ".key", ".p12", ".pfx", ".jks", "keystore",
               ".tfstate", ".backup", ".pem", ".yaml", ".yml", ".json", ".toml", ".secrets",
               ".vars", ".envrc")  # fmt: skip
# What a .ssh folder holds that is public: its client config, the hosts' and the users'
# public keys.
_SSH_PUBLIC = re.compile(r"/\.ssh/(?:config|known_hosts2?(?:\.old)?|authorized_keys2?)$")
_ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.[A-Za-z0-9_.-]*+)?$")
_NOT_SECRET = re.compile(r"\.(?:pub|example|sample|template|dist)$")
_PERSISTENCE = (
    "*/.git/hooks", "*/.git/hooks/*", ".git/hooks/*", "*/.git/config", ".git/config",
    "~/.gitconfig", "~/.config/git/config", "/etc/gitconfig", "~/.config/autostart/*",
    "/etc/xdg/autostart/*", "~/.config/systemd/*", "/etc/systemd/*", "/lib/systemd/*",
    "/usr/lib/systemd/*", "/etc/init.d/*", "/etc/cron*", "/var/spool/cron/*",
    "~/Library/LaunchAgents/*", "/Library/LaunchAgents/*", "/Library/LaunchDaemons/*",
    "/etc/rc.local", "/etc/profile", "/etc/profile.d/*", "/etc/bash.bashrc", "/etc/zsh/*",
    "~/.config/fish/*", "/etc/ld.so.preload", "~/.ssh/rc", "~/.ssh/authorized_keys*",
    "~/.local/share/applications/*", "~/.config/environment.d/*", "~/.pam_environment",
    # The folders themselves: "cp x.desktop ~/.config/autostart/" lands inside them.
    "~/.config/autostart", "/etc/xdg/autostart", "~/.config/systemd/user", "/etc/cron.d",
    "~/Library/LaunchAgents", "/Library/LaunchAgents", "/Library/LaunchDaemons",
    "~/.local/share/applications", "~/.config/environment.d", "/etc/profile.d",
    # Run later by what reads them: a program found first on PATH, code every python start
    # runs, npm's settings (script-shell), direnv's .envrc at every cd into its folder.
    "~/.local/bin", "~/.local/bin/*", "*/site-packages/*.pth",
    "*/site-packages/usercustomize.py", "*/site-packages/sitecustomize.py",
    "*/dist-packages/*.pth", "*/dist-packages/sitecustomize.py", "~/.npmrc", "*/.npmrc",
    "*/.envrc", "*/.gitconfig", "~/.vim/*", "~/.config/nvim/*", "~/.emacs.d/*",
    "~/.oh-my-zsh/custom/*", "~/.zprezto/*", "~/.config/fish/conf.d/*",
    "~/.ipython/profile_*/startup/*", "~/.julia/config/startup.jl", "~/.config/tmux/*",
    # Tools' own settings that name a command they run later: cargo's runner and aliases,
    # yarn's yarnPath, pnpm's script-shell, gh's "!" aliases, direnv's direnvrc, pip's
    # index (the next install runs its setup code), wget's use_askpass, the mailcap viewers,
    # starship's custom commands, matplotlib's backend module, VS Code's settings and
    # extensions, gradle's init scripts and jvm arguments, sbt's plugins, jupyter's config,
    # git's template hooks and husky's.
    "~/.cargo/config", "~/.cargo/config.toml", "*/.cargo/config", "*/.cargo/config.toml",
    "~/.yarnrc.yml", "*/.yarnrc.yml", "~/.yarnrc", "~/.config/pnpm/rc", "~/.config/gh/*",
    "~/.config/direnv/*", "~/.pip/pip.conf", "~/.config/pip/pip.conf", "/etc/pip.conf",
    "~/.wgetrc", "~/.curlrc", "~/.mailcap", "~/.config/starship.toml",
    "~/.config/matplotlib/matplotlibrc", "~/.config/Code/User/*", "~/.config/VSCodium/User/*",
    "~/.vscode/extensions/*", "~/.gradle/init.d/*", "~/.gradle/init.gradle*",
    "~/.gradle/gradle.properties", "~/.sbt/*/plugins/*", "~/.jupyter/*",
    "~/.git-templates/*", "*/.husky/*", ".husky/*",
    # More places code runs from later: programs on PATH ahead of the system's (cargo's,
    # go's, pyenv's shims, nvm's and npm's global bins), the user site of python's modules,
    # neovim's packages and the user's systemd units under ~/.local/share, desktop
    # sessions' start-up files, an editor's tasks run when the folder opens and a dev
    # container's commands run when it is built.
    "~/.cargo/bin", "~/.cargo/bin/*", "~/go/bin", "~/go/bin/*", "~/.pyenv/shims",
    "~/.pyenv/shims/*", "~/.nvm/versions/*/bin/*", "~/.npm-global/bin", "~/.npm-global/bin/*",
    "~/.local/lib/python*/site-packages/*", "~/.local/share/nvim/site",
    "~/.local/share/nvim/site/*", "~/.local/share/systemd/user",
    "~/.local/share/systemd/user/*", "~/.config/plasma-workspace/env",
    "~/.config/plasma-workspace/env/*", "~/.config/openbox/autostart*",
    "~/.config/lxsession/*/autostart", "~/.kde/Autostart/*", "~/.kde4/Autostart/*",
    "~/.config/i3/config", "~/.config/sway/config", "~/.config/hypr/*.conf",
    "*/.vscode/tasks.json", ".vscode/tasks.json", "*/.devcontainer/*", ".devcontainer/*",
    "*/.vscode/settings.json", ".vscode/settings.json", "~/.bashrc.d", "~/.bashrc.d/*",
    "~/.profile.d", "~/.profile.d/*", "~/.lesskey", "~/.less", "~/.config/lesskey",
    # Agent harnesses' settings: the hooks that send their commands through the gate
    # (docs/agents.md), the commands those hooks and their MCP servers run, what they
    # may do unasked. Rewritten, the next command is not judged or another one runs.
    "*/.claude/settings.json", "*/.claude/settings.local.json", ".claude/settings.json",
    ".claude/settings.local.json", "~/.claude.json", "*/.mcp.json", ".mcp.json",
    "*/.gemini/settings.json", ".gemini/settings.json", "~/.codex/config.toml",
    "*/.codex/config.toml", ".codex/config.toml", "*/.cursor/*.json", ".cursor/*.json",
    "*/.vscode/mcp.json", ".vscode/mcp.json", "~/.codeium/windsurf/*", "~/.continue/*",
    "*/.claude", ".claude", "*/.gemini", ".gemini", "*/.codex", ".codex", "*/.cursor", ".cursor",
    # ~/bin is on PATH in Debian's ~/.profile (as ~/.local/bin is): a program placed there
    # shadows the system's; Mercurial's, podman's and REPLs' settings; completions bash sources
    "~/bin/*", "~/.config/hg/*", "~/.config/containers/*", "~/.local/share/bash-completion/*",
    "~/.ghc/ghci.conf", "~/.config/swi-prolog/*", "~/.terraform.d/plugins/*",
    # Plasma's start-up scripts, keys bound to commands, the apps that open a file type,
    # IPython's XDG start-up folder
    "~/.config/autostart-scripts", "~/.config/autostart-scripts/*", "~/.xbindkeysrc*",
    "~/.config/mimeapps.list", "~/.local/share/applications/mimeapps.list",
    "~/.config/ipython/profile_*/startup/*",
    # more shells' and tools' start-up code: nushell, PowerShell, gdb's XDG files, IRB's,
    # npm init's module, terminals that run a shell they name (wezterm's is Lua code)
    "~/.config/nushell/*", "~/.config/powershell/*", "~/.config/gdb/*", "~/.config/irb/*",
    "~/.npm-init.js", "~/.wezterm.lua", "~/.config/wezterm/*", "~/.config/kitty/*",
    "~/.config/alacritty/*", "~/.vscode-server/data/*/settings.json",
)  # fmt: skip
# The shells' own start-up files (also sensitive places: _writes.py).
SHELL_START_UP = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
                  ".zshrc", ".zprofile", ".zshenv", ".zlogin")  # fmt: skip
STARTUP = frozenset(
    [
        *SHELL_START_UP,
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".mkshrc",
        ".xprofile",
        ".xinitrc",
        ".xsession",
        ".xsessionrc",
        ".inputrc",
        ".bash_aliases",
        # start-up files of editors, debuggers, multiplexers and REPLs: each can run a command
        ".vimrc",
        ".gvimrc",
        ".exrc",
        ".nexrc",
        ".emacs",
        ".gdbinit",
        ".lldbinit",
        ".tmux.conf",
        ".screenrc",
        ".Rprofile",
        ".irbrc",
        ".pryrc",
        ".psqlrc",
        ".sqliterc",
        ".octaverc",
        # more tools' start-up files that run code or commands: Mercurial's hooks, bazel's
        # --run_under, terraform's provider overrides, mysql's pager, perl's debugger,
        # REPLs' init files, bash-completion's own file
        ".hgrc",
        ".bazelrc",
        ".terraformrc",
        ".my.cnf",
        ".perldb",
        ".guile",
        ".sbclrc",
        ".clisprc.lisp",
        ".racketrc",
        ".ghci",
        ".erlang",
        ".iex.exs",
        ".ocamlinit",
        ".swiplrc",
        ".bash_completion",
        ".gdbearlyinit",
        ".pythonrc",
        ".pythonrc.py",
    ]
)


# Substrings every secret / persistence pattern contains: a C-speed prefilter before fnmatch.
_SECRET_KEYS = SECRET_KEYS
PERSISTENCE_KEYS = (
    ".git", "autostart", "systemd", "init.d", "cron", "Launch", "rc.local", "profile", "bashrc",
    "zsh", "fish", "ld.so.preload", ".ssh", "applications", "environment.d", "pam_environment",
    "/git/", ".local/bin", "-packages/", ".npmrc", ".envrc", "gitconfig", ".vim/", "nvim/",
    ".emacs.d/", ".ipython/", "startup.jl", "tmux/", ".cargo/", ".yarnrc", "pnpm/", "gh/",
    "direnv/", "pip.conf", "wgetrc", "curlrc", "mailcap", "starship", "matplotlib",
    "Code/User", "VSCodium", ".vscode/", ".gradle/", ".sbt/", ".jupyter/", "git-templates",
    ".husky/", "/bin/", "/hg/", "containers/", "bash-completion", "ghci", "swi-prolog",
    ".terraform.d", "zprezto", ".claude", ".mcp.json", ".gemini", ".codex", ".cursor",
    "vscode/mcp", "windsurf", ".continue", "shims", "go/bin", ".nvm/", "npm-global",
    "plasma", "openbox", "lxsession", "Autostart", "i3/", "sway/", "hypr/", "tasks.json",
    ".devcontainer", "lesskey", "/.less", "xbindkeys", "mimeapps", "ipython/", "nushell",
    "powershell", "/gdb/", "irb/", "npm-init", "wezterm", "kitty/", "alacritty",
    "vscode-server", ".gdbearlyinit", ".pythonrc",
)  # fmt: skip


# One Hyperscan scan each, or a trie regex without the wheel (multiplex/_literals.py); what
# a word that may name a secret holds: a character that may expand to one, or a key.
_SECRET_KEY = LiteralSearch((*_SECRET_KEYS, ".env"))
_PERSISTENCE_KEY = LiteralSearch(PERSISTENCE_KEYS)
MAY_SECRET_WORDS = (*"$`{~*?[", *_SECRET_KEYS, ".env")
_MAY_SECRET = LiteralSearch(MAY_SECRET_WORDS)


def persistence_key(text: str) -> bool:
    """``text`` holds a key of some persistence place: only such paths can be one."""
    return _PERSISTENCE_KEY.search(text)


# Each list in one regex: fnmatchcase(path, p) is translate(p) matched at the start.
_SECRETS_GLOB = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in _SECRETS))
_PERSISTENCE_GLOB = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in _PERSISTENCE))


@functools.lru_cache(maxsize=64)
def _secret_cwd(cwd: str) -> bool:
    """A key in the folder, also one ending in a "/" ("age/" at its end)."""
    return _SECRET_KEY.search(cwd) or _SECRET_KEY.search(cwd + "/")


def may_be_secret(word: str, place: Place) -> bool:
    """Cheap first test: only such words can resolve to a secret path (a relative word
    together with the folder it is read in: ``gh/hosts.yml`` in ``~/.config``)."""
    return _MAY_SECRET.search(word) or secret_by_folder(word, place)


def secret_by_folder(word: str, place: Place) -> bool:
    """:func:`may_be_secret` but its search of ``word`` for :data:`MAY_SECRET_WORDS`: a key
    in the folder, or across the folder's end and a word."""
    cwd = place.cwd
    if not cwd:
        return False
    if _secret_cwd(cwd):
        return True
    # A key across the boundary: only those with a "/" inside ("/gh", "ssl/private"), in
    # each of the words may_hold_secret joined (cat x gh/hosts.yml in ~/.config).
    for one in word.split("\n") if "\n" in word else (word,):
        if one.startswith(_STRADDLING) and _SECRET_KEY.search(cwd + "/" + one):
            return True
    return False


# What follows the "/" of a secret key that holds one: a relative word starting so may
# complete a key with the folder it is read in (gh/hosts.yml in ~/.config).
_STRADDLING = tuple(
    sorted({k.split("/", 1)[1] for k in SECRET_KEYS if "/" in k.rstrip("/")} - {""})
)


def may_hold_secret(words: Sequence[str], place: Place) -> bool:
    """Some word of ``words`` passes :func:`may_be_secret`: one search over them all.

    No key contains a newline, so a match in the joined text lies inside one word.
    """
    return bool(words) and may_be_secret("\n".join(words), place)


def _tilde(path: str, place: Place) -> str:
    norm = posixpath.normpath(path) if "/." in path or "//" in path or path.endswith("/") else path
    for home in place.normal_homes:
        if norm == home:
            return "~"
        if norm.startswith(home + "/"):
            return "~" + norm[len(home) :]
    return norm


def resolved(word: str, place: Place) -> list[str]:
    """The plausible paths of a word in ``~/…`` form where they are under a home."""
    values, _ = candidates(word, place)
    return [_tilde(v, place) for v in values if v]


# Another user's home (or root's): what is a secret in the own home is one there too.
_OTHER_HOME = re.compile(r"/+(?:home/+[^/]+|root)(?=/)")


def is_secret_path(path: str) -> bool:
    """``path`` (``~/…`` form) is a private key or credential store, or a glob that may
    name one (``~/.a?s/credentials``, ``~/.ss[h]/id_rsa``); also in another user's
    home (``/home/bob/.pgpass``, ``/home/*/.ssh/id_rsa``)."""
    home = _OTHER_HOME.match(path) if path.startswith("/") else None
    if home is not None and _own_secret_path("~" + path[home.end() :]):
        return True
    return _own_secret_path(path)


def _own_secret_path(path: str) -> bool:
    if ".env" in path and _ENV_FILE.search(path):
        return not _NOT_SECRET.search(path)
    if ("*" in path or "?" in path or "[" in path) and (
        _glob_reaches_secret(path) or _glob_names_a_key(path.rpartition("/")[2])
    ):
        return True
    if _NOT_SECRET.search(path) or _SSH_PUBLIC.search(path):
        return False
    if _SECRET_KEY.search(path) and _SECRETS_GLOB.match(path) is not None:
        return True
    return path.endswith(_NAMED_ENDS) and _NAMED.fullmatch(path.rpartition("/")[2]) is not None


# Each secret pattern as one concrete path ("*/" a home, "*" a name), in components: what
# a glob word is matched against, component by component as the shell expands it (a
# glob's reach is judged from its leading parts: ~/.ss? names the folder of keys).
_EXAMPLES = tuple(
    {
        tuple(("~/" + p[2:] if p.startswith("*/") else p).replace("*", "x").split("/"))
        for p in (*_SECRETS, *_BY_NAME)
    }
)


# The examples of each length, and those of each length with a given component at a place.
_BY_LENGTH: dict[int, frozenset[tuple[str, ...]]] = {}
_NAMED_AT: dict[tuple[int, int, str], frozenset[tuple[str, ...]]] = {}
for _example in _EXAMPLES:
    _BY_LENGTH[len(_example)] = _BY_LENGTH.get(len(_example), frozenset()) | {_example}
    for _at, _name in enumerate(_example):
        _key = (len(_example), _at, _name)
        _NAMED_AT[_key] = _NAMED_AT.get(_key, frozenset()) | {_example}


@functools.lru_cache(maxsize=256)
def _glob_reaches_secret(path: str) -> bool:
    parts = path.split("/")
    globbed = [_GLOB_CHAR.search(part) is not None for part in parts]
    if True not in globbed:
        return False
    # Each head of two or more components that holds a glob.
    for k in range(max(2, globbed.index(True) + 1), len(parts) + 1):
        head = parts[:k]
        # A component without * ? [ matches only itself: only examples with it are tried.
        examples = _BY_LENGTH.get(k, frozenset())
        for at in range(k):
            if examples and not globbed[at]:
                examples = examples & _NAMED_AT.get((k, at, head[at]), frozenset())
        if any(_expands_to(head, example) for example in examples):
            return True
    return False


_GLOB_CHAR = re.compile(r"[*?\[]")
# A file name glob's own words that mean a key (id_*, *key*, *secret*): only such a glob is
# matched against the names of _BY_NAME (``*.json`` could name x.secrets.json, as any word).
_KEYISH = ("id_", "key", "priv", "secret", "cred", "token", ".p12", ".pfx", ".jks", "tfstate")
_KEY_NAMES = tuple(p.rpartition("/")[2].replace("*", "x") for p in _BY_NAME)


@functools.lru_cache(maxsize=256)
def _glob_names_a_key(name: str) -> bool:
    """The last component ``name``, a glob holding a key's word, may name a private key or
    secrets file (``id_*``, ``*key*``, ``*secret*``)."""
    words = _GLOB_CHAR.sub(" ", name.split("]")[-1]).lower()
    if not any(w in words for w in _KEYISH):
        return False
    return any(fnmatch.fnmatchcase(example, name) for example in _KEY_NAMES)


def _expands_to(globs: list[str], names: tuple[str, ...]) -> bool:
    """Whether the glob's components match the path's: ``*`` never crosses a ``/`` nor,
    unless written, matches a leading dot (``~/*`` holds no ``~/.ssh``)."""
    return all(
        fnmatch.fnmatchcase(name, glob) and (glob.startswith(".") or not name.startswith("."))
        for glob, name in zip(globs, names, strict=True)
    )


def is_persistence_path(path: str) -> bool:
    """Writing ``path`` (``~/…`` form) installs something that runs later by itself."""
    if path.rpartition("/")[2] in STARTUP:  # its basename
        return True
    if not _PERSISTENCE_KEY.search(path):
        return False
    return _PERSISTENCE_GLOB.match(path) is not None


def is_home_root(path: str) -> bool:
    """``path`` (``~/…`` form) is a whole home: ``~``, ``~/``, ``~/*``, ``~/.``."""
    return (
        path in ("~", "~/", "~/*", "~/.", "~/.*")
        or re.fullmatch(r"/(home|Users)/[^/]+/?", path) is not None
    )
