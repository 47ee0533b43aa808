"""Commands that print a credential (pattern ``secret-read``, docs/security.md#named-patterns).

The tools that keep a credential and print it when asked (``gh auth token``,
``kubectl get secret``, ``vault read``, ``pass show`` …), by the leading operands
that make them do it and the options that must be there too. A pure leaf.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from multiplex.shell.parsing._parsed import SimpleCommand
from multiplex.shell.parsing.runs._verbs import kube_words

__all__ = ["echoes_credential", "prints_credentials"]


# gpg --export-secret-keys (and its abbreviations: gpg takes a unique prefix), gpgsm's p12.
_KEY_EXPORTERS = frozenset({"gpg", "gpg2", "gpgsm"})
# Commands that print a credential: the leading operands that make them do it, and the
# options that must be there too ("" for none). docs/security.md#named-patterns.
_CREDENTIAL_PRINTERS: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    "gh": ((("auth", "token"), ()), (("auth", "status"), ("-t", "--show-token"))),
    "gcloud": (
        (("auth", "print-access-token"), ()), (("auth", "print-identity-token"), ()),
        (("auth", "application-default", "print-access-token"), ()),
        (("config", "config-helper"), ()), (("secrets", "versions", "access"), ()),
    ),
    "az": (
        (("account", "get-access-token"), ()), (("keyvault", "secret", "show"), ()),
        (("keyvault", "secret", "download"), ()),
    ),
    "aws": (
        (("configure", "get"), ()), (("configure", "export-credentials"), ()),
        (("sts", "get-session-token"), ()), (("ecr", "get-login-password"), ()),
        (("secretsmanager", "get-secret-value"), ()),
        (("ssm", "get-parameter"), ("--with-decryption",)),
    ),
    "kubectl": (
        (("config", "view"), ("--raw", "--flatten")), (("get", "secret"), ()),
        (("get", "secrets"), ()), (("create", "token"), ()),
    ),
    "vault": ((("read",), ()), (("kv", "get"), ()), (("token", "create"), ())),
    "op": ((("read",), ()), (("item", "get"), ()), (("inject",), ())),
    "security": (
        (("find-generic-password",), ("-w", "-g")), (("find-internet-password",), ("-w", "-g")),
    ),
    "secret-tool": ((("lookup",), ()),),
    "pass": ((("show",), ()),),
    "git": ((("credential", "fill"), ()),),
    "heroku": ((("auth:token",), ()), (("config",), ()), (("config:get",), ())),
    # more secret stores, vaults and decrypters: what they print is the secret
    "bw": ((("get", "password"), ()), (("get", "item"), ()), (("get", "notes"), ()),
           (("get", "totp"), ()), (("export",), ())),
    "lpass": ((("show",), ()), (("export",), ())),
    "doppler": ((("secrets",), ()), (("run",), ("--command",))),
    "infisical": ((("secrets",), ()), (("export",), ())),
    "chamber": ((("read",), ()), (("export",), ())),
    "sops": ((("-d",), ()), (("--decrypt",), ()), (("decrypt",), ())),
    "ansible-vault": ((("view",), ()), (("decrypt",), ())),
    "keyctl": ((("print",), ()), (("read",), ()), (("pipe",), ())),
    "systemd-creds": ((("decrypt",), ()), (("cat",), ())),
    "flyctl": ((("auth", "token"), ()),),
    "fly": ((("auth", "token"), ()),),
    "firebase": ((("login:ci",), ()),),
    "netlify": ((("status",), ("--json",)), (("env:get",), ()), (("env:list",), ("--plain", "--json"))),
    # a hosting platform's variables in the clear (their secrets among them), and pulled
    "vercel": ((("env", "pull"), ()), (("pull",), ())),
    "railway": ((("variables",), ()), (("run",), ("--command",))),
    "pulumi": ((("config",), ("--show-secrets",)), (("stack", "output"), ("--show-secrets",))),
    "doctl": ((("auth", "token"), ()),),
    "keyring": ((("get",), ()),),  # python's keyring CLI: keyring get SERVICE USER
    "glab": ((("auth", "status"), ("-t", "--show-token")),),
    "keepassxc-cli": ((("show",), ()), (("export",), ())),
    "gopass": ((("show",), ()), (("cat",), ()), (("otp",), ())),
    # state and outputs in the clear: sensitive outputs too (-json, -raw), the state pulled
    "terraform": ((("output",), ("-json", "-raw")), (("show",), ("-json",)), (("state", "pull"), ())),
    "helm": ((("get", "values"), ()), (("get", "all"), ())),  # a release's values: its passwords
}  # fmt: skip
_CREDENTIAL_PRINTERS["tofu"] = _CREDENTIAL_PRINTERS["terraform"]
_CREDENTIAL_PRINTERS["terragrunt"] = _CREDENTIAL_PRINTERS["terraform"]
_CREDENTIAL_PRINTERS["vault"] += ((("print", "token"), ()),)
_CREDENTIAL_PRINTERS["secret-tool"] += ((("search",), ("--all", "--unlock")),)
# A setting read back that holds a credential: npm's _authToken, a git remote's auth header
# (actions/checkout keeps the job's token in http.<url>.extraheader).
_CREDENTIAL_SETTING = re.compile(r"(?i)auth|passw|token|extraheader|secret")
_CONFIG_READERS = frozenset({"npm", "pnpm", "yarn", "git"})
# A Kubernetes API's secrets, asked without kubectl (a pod's own token signs in).
_KUBE_SECRETS = re.compile(r"/api/v1/(?:namespaces/[^/?#\s]+/)?secrets(?:[/?#]|$)")
_HTTP_CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "xhs"})
# OpenShift's oc is kubectl with more: its session token too (oc whoami -t).
_CREDENTIAL_PRINTERS["oc"] = (
    *_CREDENTIAL_PRINTERS["kubectl"],
    (("whoami",), ("-t", "--show-token")),
)


# A variable named like a credential (TOKEN, SECRET, PASSWORD, API_KEY …).
_CREDENTIAL_NAME = re.compile(
    r"[A-Za-z0-9_]*(?:TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL"
    r"|_PAT)[A-Za-z0-9_]*",
    re.IGNORECASE,
)


# Named like a credential but holding where one is, or what it is called: a folder, a
# file's path, an address (CREDENTIALS_DIRECTORY, AWS_SHARED_CREDENTIALS_FILE, TOKEN_URL).
_WHERE = re.compile(
    r".*_(?:DIR|DIRECTORY|PATH|FILE|URL|URI|HOST|ENDPOINT|SOCK|SOCKET|NAME)"
    r"|GOOGLE_APPLICATION_CREDENTIALS",
    re.IGNORECASE,
)


def _credential_variable(name: str) -> bool:
    return _CREDENTIAL_NAME.fullmatch(name) is not None and _WHERE.fullmatch(name) is None


# The variables a word expands: $NAME, ${NAME}, ${NAME:-…} (not $$ or a lone $).
_EXPANDED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# A resource word of kubectl naming secrets: secret, secrets, secret.v1, secrets.v1 …
_SECRETS = re.compile(r"secrets?(?:\.v1)?(?:\.core)?", re.IGNORECASE)


def _resources(words: Sequence[str]) -> list[str]:
    """The resource kinds of kubectl's ``TYPE[,TYPE…]`` and ``TYPE/NAME`` words."""
    return [part.partition("/")[0] for word in words for part in word.split(",")]


def prints_credentials(prog: str, args: Sequence[str]) -> bool:
    if prog in _KEY_EXPORTERS:  # also gpg -d F: the cleartext a secret key opens
        return any(
            a.startswith("--export-sec") or a in ("-d", "--decrypt") for a in args if a != "--"
        )
    if prog.startswith("git-credential-"):  # git-credential-store get: a helper's stored login
        return "get" in args
    if prog == "git" and args[:1] and args[0].startswith("credential-"):
        return "get" in args[1:2]  # git credential-store|cache|libsecret|osxkeychain get
    if prog.startswith("docker-credential-"):
        return "get" in args
    if prog in ("sops", "age", "rage") and any(a in ("-d", "--decrypt") for a in args):
        return True  # sops -d F, age -d -i KEY F: the cleartext printed
    if prog == "printenv":  # printenv AWS_SECRET_ACCESS_KEY: one credential's value
        return any(_credential_variable(a) for a in args if not a.startswith("-"))
    if prog in _HTTP_CLIENTS and any(_KUBE_SECRETS.search(a) for a in args if "://" in a):
        return True  # curl https://kubernetes.default.svc/api/v1/namespaces/x/secrets
    if prog in _CONFIG_READERS and "config" in args:  # npm config get …:_authToken, git …
        words = [a for a in args if not a.startswith("-")]
        if words[:1] == ["config"] and (words[1:2] == ["get"] or prog == "git"):
            return any(_CREDENTIAL_SETTING.search(w) for w in words[1:])
    forms = _CREDENTIAL_PRINTERS.get(prog)
    if forms is None:
        return False
    if prog in ("kubectl", "oc"):
        raw = [a.partition("=")[2] if "=" in a else "" for a in args if a.startswith("--raw")]
        raw += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--raw"]
        if any(_KUBE_SECRETS.search(r) for r in raw):
            return True  # kubectl get --raw /api/v1/namespaces/x/secrets
        words = kube_words(args)
        if words[:1] == ["get"] and any(_SECRETS.fullmatch(r) for r in _resources(words[1:2])):
            return True  # -n NS get secret/NAME, get secrets,configmaps
    else:
        words = [a for a in args if not a.startswith("-")]
        if prog == "terragrunt":  # terragrunt run-all output -json: each module's
            words = [w for w in words if w not in ("run-all", "run")]
    for lead, needs in forms:
        if tuple(words[: len(lead)]) == lead and (
            not needs or any(_given(a, n) for a in args for n in needs)
        ):
            return True
    return False


def _given(arg: str, option: str) -> bool:
    """``option`` is ``arg``, ``arg``'s ``--long=VALUE``, or a letter of its short
    cluster (``-wa`` holds ``-w``)."""
    if arg == option or arg.startswith(option + "="):
        return True
    short = len(option) == 2 and not arg.startswith("--") and arg.startswith("-")
    return short and option[1] in arg[1:]


def _expanded(text: str) -> list[str]:
    """The variables ``text`` expands (``$NAME``, ``${NAME…}``): not inside single quotes
    (``'$NAME'``, ``$'…'``) and not escaped (``\\$NAME``). One pass, left to right."""
    names: list[str] = []
    single = double = False
    i = 0
    while i < len(text):
        c = text[i]
        if single:
            single = c != "'"
        elif c == "\\":
            i += 1  # the next character is literal
        elif c == "'" and not double:
            single = True
        elif c == '"':
            double = not double
        elif c == "$" and (found := _EXPANDED.match(text, i)) is not None:
            names.append(found.group(1))
        i += 1
    return names


def echoes_credential(cmd: SimpleCommand, line: str) -> bool:
    """``echo "$AWS_SECRET_ACCESS_KEY"`` (or printf) into the output, as ``printenv`` prints
    it; not piped on (``echo "$GITHUB_TOKEN" | gh auth login --with-token``) or into a file."""
    if cmd.program not in ("echo", "printf") or any(r.writes_file for r in cmd.redirects):
        return False
    # Carried (bash -c "echo '$X'"), the outer quoting decided what expands: every $NAME counts.
    words = [v for a in cmd.argv[1:] for v in _EXPANDED.findall(a)]
    if not any(_credential_variable(v) for v in (words if cmd.wrapped_by else _expanded(cmd.text))):
        return False
    at = line.find(cmd.text)
    after = line[at + len(cmd.text) :].lstrip() if at >= 0 else ""
    return not (after.startswith("|") and not after.startswith("||"))
