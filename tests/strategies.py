"""Hypothesis strategies shared by the suite: configs, command lines, interleavings."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["profile_config", "profile_configs", "rule_words", "turn_plans"]

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
