"""Hypothesis strategies shared by the suite: configs, command lines, interleavings."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = [
    "config_bytes",
    "profile_config",
    "profile_configs",
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
