"""Hypothesis strategies shared by the suite: configs, command lines, interleavings."""

from __future__ import annotations

from hypothesis import strategies as st

from multiplex.redaction import encoded_forms

__all__ = [
    "config_bytes",
    "known_value_sets",
    "profile_config",
    "profile_configs",
    "redaction_texts",
    "rule_words",
    "turn_plans",
    "yaml_documents",
]

rule_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_.", min_size=1, max_size=8)


def profile_config(index: int, backend: str, redact: bool, rules: list[str]) -> str:
    """A valid config.yaml text, unique to profile ``index``."""
    allow = "".join(f"  - 'p{index}-{r} *'\n" for r in rules) or "  []\n"
    return (
        f"terminal:\n  backend: {backend}\n  cwd: work-{index}\n"
        f"  env: {{PROFILE_INDEX: '{index}'}}\n"
        f"  credential_files: [credentials/token-{index}.txt]\n"
        f"command_allowlist:\n{allow}"
        f"security:\n  redact_secrets: {str(redact).lower()}\n"
    )


@st.composite
def profile_configs(draw: st.DrawFn, index: int) -> str:
    """Generated valid config.yaml texts for profile ``index``."""
    backend = draw(st.sampled_from(["local", "local", "docker", "ssh"]))
    redact = draw(st.booleans())
    rules = draw(st.lists(rule_words, min_size=0, max_size=3, unique=True))
    return profile_config(index, backend, redact, rules)


def turn_plans(
    profiles: int, max_turns: int = 300, min_turns: int = 1
) -> st.SearchStrategy[list[tuple[int, str]]]:
    """Interleavings of turns: (profile index, how the turn's work runs)."""
    how = st.sampled_from(["inline", "thread", "task", "child", "map"])
    return st.lists(
        st.tuples(st.integers(0, profiles - 1), how), min_size=min_turns, max_size=max_turns
    )


# -- redaction -----------------------------------------------------------------

# Values that overlap, nest as prefixes, repeat one character, carry unicode,
# quotes, a NUL, or run past the engine's 256-byte prefix.
_KNOWN_POOL = [
    "abcdef12", "abcdef1234", "abcdef123456", "cdef1234xy", "qqqqqqqq", "qqqqqqqqqq",
    "own-secret-value-1", "other-profile-secret-2", "s3cr3t-Value!/+?&", 'say "hi"\\now',
    "ünïcödé-sécret", "pässwörd\u212aey", "nul\x00inside-it",
    "tokenvalue99", "hunter2hunter2", "L" * 300 + "-long-credential", "x" * 257,
]  # fmt: skip

# Pieces that start, end or imitate secrets of every kind, and the characters
# the engine treats specially: newlines, case (KELVIN SIGN, dotted I, sigma),
# multi-byte and surrogate code points.
_REDACTION_PIECES = [
    "API_KEY=", "export DB_PASSWORD='", "password: ", "apiKey: ", '{"client_secret": "',
    "Authorization: Bearer ", "authorization: Basic ", "Proxy-Authorization: Digest ",
    "Cookie: ", "Set-Cookie: ", "postgres://app:", "@db.internal:5432/prod", "://", "@",
    "ghp_", "gho_", "github_pat_", "glpat-", "xoxb-", "sk-", "sk-ant-", "sk_live_", "AKIA",
    "AIza", "ya29.", "npm_", "SK", "AC", "SG.", "key-", "hf_", "dop_v1_", "eyJ", "MTIz",
    "AccountKey=", "hvs.", "dp.pt.", ".atlasv1.", ":AA", "12345678", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "-----BEGIN CERTIFICATE-----", "[REDACTED:known]",
    "https://hooks.slack.com/services/", "https://discord.com/api/webhooks/",
    "KEY", "Token", "SESSION_len", "pat", "monkey=", "=", ":", "=>", "'", '"', "\\", ".", "-",
    "_", "&", "?", " ", "\t", "\n", "\r\n", "\u212a", "\u0130", "\u03a3", "é", "日本", "\ud83d",
    "0123456789abcdef0123456789abcdef", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
]  # fmt: skip


def known_value_sets() -> st.SearchStrategy[list[str]]:
    """Sets of known secret values, some short enough to be ignored."""
    return st.lists(st.sampled_from(_KNOWN_POOL) | st.text(min_size=4, max_size=12), max_size=6)


@st.composite
def redaction_texts(draw: st.DrawFn, known: list[str] | None = None) -> str:
    """Output text with secret-like pieces, ``known`` values and their encodings embedded."""
    pool = list(_REDACTION_PIECES)
    for value in known or ():
        pool.append(value)
        pool.extend(encoded_forms(value))
    piece = st.sampled_from(pool) | st.text(max_size=6) | st.text(alphabet="aA0_-+/=.", max_size=40)
    return "".join(draw(st.lists(piece, max_size=30)))


# Keys a config.yaml may hold, so generated documents reach deep into the owned sections.
_KEYS = [
    "terminal",
    "approvals",
    "security",
    "command_allowlist",
    "code_execution",
    "aprovals",
    "backend",
    "cwd",
    "env",
    "env_passthrough",
    "credential_files",
    "host_mounts",
    "timeout",
    "mode",
    "deny",
    "unattended",
    "protected_files",
    "yolo",
    "redact_secrets",
    "self_approve",
    "model",
    "<<",
]
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**60, max_value=10**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["off", "no", "manual", "local", "1e18", "2026-13-45", "~", "../x", "/etc"]),
)


def yaml_documents() -> st.SearchStrategy[object]:
    """Arbitrary YAML-representable documents, biased to the keys multiplex reads."""
    keys = st.one_of(st.sampled_from(_KEYS), st.text(max_size=8), st.integers(-3, 3))
    return st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)
        ),
        max_leaves=25,
    )


@st.composite
def config_bytes(draw: st.DrawFn) -> bytes:
    """Bytes a config file might hold: a valid config spliced with arbitrary bytes, or noise."""
    base = profile_config(0, "local", True, ["git status"]).encode()
    kind = draw(st.sampled_from(["splice", "noise", "yaml-ish"]))
    if kind == "noise":
        return draw(st.binary(max_size=300))
    if kind == "yaml-ish":
        return draw(st.text(alphabet=":-[]{}'\"#&*!|>%@ \n\tabcon19.~", max_size=200)).encode()
    at = draw(st.integers(0, len(base)))
    return base[:at] + draw(st.binary(max_size=20)) + base[at + draw(st.integers(0, 10)) :]
