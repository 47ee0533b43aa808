"""Other profiles' values that reach into an own value's mask (``docs/redaction.md``, "Engine").

The others' set is matched over the text unmasked, and again over the text as
the own values left it masked only when one of its matches meets an own match
or one of its forms that could reach into a mask occurs near one. Deciding
that from the masks' surroundings alone must give what matching again always
gives.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex.redaction import KnownValues, Redactor, _engine, _redactor
from multiplex.redaction._known import KNOWN_MASK

needs_engine = pytest.mark.skipif(
    _engine.backend() is None, reason="the hyperscan wheel is not installed here"
)

OWN = "ownsecret1"


def _redact(text: str, own: list[str], others: list[str]) -> str:
    return Redactor(KnownValues(own), layer2=False, others=KnownValues(others)).redact(text)


@pytest.mark.parametrize("engine", [True, False], ids=["hyperscan", "python"])
@pytest.mark.parametrize(
    ("other", "text"),
    [
        ("D:known]tail99", f"x {OWN}tail99 y"),  # ends with the mask's end
        ("head99[REDAC", f"x head99{OWN} y"),  # starts with the mask's start
        ("head[REDACTED:known]tail", f"x head{OWN}tail y"),  # holds the whole mask
        ("REDACTED:known", f"x {OWN} y"),  # inside the mask
    ],
)
def test_another_profiles_value_made_by_a_mask_covers_it_whole(
    other: str, text: str, engine: bool
) -> None:
    if engine and _engine.backend() is None:
        pytest.skip("the hyperscan wheel is not installed here")
    if engine:
        out = _redact(text, [OWN], [other])
    else:
        with _engine.pure_python():
            out = _redact(text, [OWN], [other])
    assert out == f"x {KNOWN_MASK} y"


@needs_engine
def test_a_form_that_could_reach_a_mask_but_is_not_near_one_changes_nothing() -> None:
    other = "head99[REDAC"
    text = f"head99 {'filler ' * 40}{OWN} and {'filler ' * 40} head99[REDAC"
    assert _redact(text, [OWN], [other]) == text.replace(OWN, KNOWN_MASK).replace(other, KNOWN_MASK)


_PIECES = [KNOWN_MASK[:k] for k in range(1, 17)] + [KNOWN_MASK[-k:] for k in range(1, 17)]


@st.composite
def _reaching_cases(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """Own values, others' values with pieces of the mask at either end, and a
    text holding own values with those others' ends beside them, or apart."""
    word = st.text("abcdefgh123", min_size=3, max_size=8)
    own = draw(st.lists(word.map(lambda w: f"own{w}"), min_size=1, max_size=3))
    others, cores = [], []
    for _ in range(draw(st.integers(1, 3))):
        piece, core = draw(st.sampled_from(_PIECES)), draw(word)
        others.append(draw(st.sampled_from([core + piece, piece + core])))
        cores.append(core)  # beside an own value, its mask may make the value
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        parts.append(
            draw(
                st.one_of(
                    st.sampled_from(own),
                    st.sampled_from(others),
                    st.sampled_from(cores),
                    st.text("abc \n", max_size=12),
                    st.just(" filler" * 30),  # farther than a form reaches
                )
            )
        )
    return "".join(parts), own, others


@needs_engine
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_reaching_cases())
def test_looking_near_the_masks_gives_what_matching_again_gives(
    case: tuple[str, list[str], list[str]],
) -> None:
    text, own, others = case
    got = _redact(text, own, others)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_redactor, "_reaches_a_mask", lambda *_: True)
        assert got == _redact(text, own, others)
    with _engine.pure_python():
        assert got == _redact(text, own, others)
