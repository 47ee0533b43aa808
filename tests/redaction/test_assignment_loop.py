"""The assignment shape's loop (``_assignment.py``) and its search for fragments without
the names they leave (``_left.py``) give the reference's output on lines built to
reach their shortcuts: names already found to be left, passed over without their
match when the next fragment is on a later line, or by the search where their value
holds no letter."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex.redaction import _assignment, _engine, _left, _prefilter, redact_patterns
from multiplex.redaction._patterns import PATTERNS, fold_case
from tests.redaction import _reference

needs_engine = pytest.mark.skipif(
    _engine.backend() is None, reason="the hyperscan wheel is not installed here"
)

_ASSIGNMENT = PATTERNS[-1]

# Left names (and their look-alikes in other cases, longer or cut by a line
# break), secret names, a name reaching past the 48-character bound.
_NAMES = [
    "session_len", "Session_Len", "sessionLen", "SESSION_LEN", "session_lEn", "session_length",
    "x_session_len", "session_len.x", "key", "KEY", "keyboard", "api_token", "token_path",
    "session", "sessionlen", "password_hint", "authorization", "secret" + "x" * 50,
    "session_" + "l" * 45, "pass\nword", "kelvin_\u212aey", "cl\u00e9_key", "session_len_key",
    "cred", "CRED", "cred_x", "credpass", "session_len2", "sessionsession", "x.session_len",
]  # fmt: skip
_SEPARATORS = ["=", ":", '":', "' = ", " => ", ":=", "==", "\t:\t"]
_VALUES = [
    "12", "1234", "12345}}", "abcdefgh", '"quoted value"', "'single quoted'", '"key=zzzzzz"',
    "token=abcdefgh", "'a key=bcdefghij'", "[REDACTED:assignment]", "$HOME", "true", "****",
    "f(x)", "bearer abcdefgh12", "x" * 70, "\u00e9t\u00e9t\u00e9t\u00e9", '"a\\"key=b"',
    "12ab", "12-34/56", "12.5e3", "1" * 1030, "12key=abcdefgh", "12`key=abcdefgh", "=12", "12 }",
]  # fmt: skip
_JOINS = ["\n", "\r\n", " ", "", ", ", '","', "&", "\n\n", "\r"]


@st.composite
def assignment_lines(draw: st.DrawFn) -> str:
    """Lines of ``name<separator>value`` pieces, some run together on one line."""
    parts = []
    for _ in range(draw(st.integers(1, 12))):
        parts.append(draw(st.sampled_from(['"', "", " ", "{", "-"])))
        parts.append(draw(st.sampled_from(_NAMES)))
        parts.append(draw(st.sampled_from(_SEPARATORS)))
        parts.append(draw(st.sampled_from(_VALUES)))
        parts.append(draw(st.sampled_from(_JOINS)))
    return "".join(parts)


@needs_engine
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(assignment_lines())
def test_loop_output_is_the_reference(text: str) -> None:
    expected = _reference.apply_patterns(text)
    # Twice: the first run finds the names that are left, the second passes them over.
    assert redact_patterns(text) == expected
    assert redact_patterns(text) == expected
    hay = fold_case(text)
    starts = sorted({i for a in _ASSIGNMENT.anchors for i in _find_all(hay, a)})
    assert _assignment.assignment_at(text, hay, starts) == _ASSIGNMENT.apply_to(text, hay)


def _find_all(hay: str, anchor: str) -> list[int]:
    found, at = [], hay.find(anchor)
    while at >= 0:
        found.append(at)
        at = hay.find(anchor, at + 1)
    return found


@needs_engine
@pytest.mark.parametrize("left", ["session_len", "Session_Len", "key_path"])
def test_a_left_name_does_not_hide_what_its_match_would_have_covered(left: str) -> None:
    # The left name is known; on the same line its match covers a secret-looking
    # assignment in its value, which must stay as the reference leaves it.
    _assignment._LEFT[left[0]] = left
    for text in [
        f'{left}="key=abcdefgh"\n',
        f"{left}=token:abcdefgh\n{left}=1234\n",
        f"{left}='x key=abcdefgh' key=ijklmnop\n",
        f"{left}=1234",
        f"{left}",
        f"{left}=1234 {left}=key=abcdefgh\n",
        f"{left}_x=1234\nkey=abcdefgh",
        f"{left.upper()}=1234\nkey=abcdefgh",
    ]:
        assert redact_patterns(text) == _reference.apply_patterns(text), text


@needs_engine
def test_pieces_cut_between_a_left_name_and_the_next_line() -> None:
    line = '{"session_len":12345}\n'
    block = "key=abcdefgh\n" + line * 3 + 'session_len="key=ijklmnop"\n'
    text = block * (3 * _prefilter.PIECE // len(block))
    assert redact_patterns(text) == _reference.apply_patterns(text)


@needs_engine
@pytest.mark.parametrize(
    "text",
    [
        "session_len=12 key=abcdefgh\n",
        "session_len=12key=abcdefgh\n",
        "session_len=12|key=abcdefgh\n",
        'session_len="12" key=abcdefgh\n',
        "session_len=12ab key=abcdefgh\n",
        "session_len==12 key=abcdefgh\n",
        "session_len => 12;token=abcdefgh\n",
        "x.session_len=12 key=abcdefgh\n",
        "Session_len=12\nsession_len=12 key=abcdefgh\n",
        "SESSION_LEN:12\nsession_len:'key=abcdefgh'\n",
        "session_len=" + "1" * 1030 + "key=abcdefgh\n",
        "session_len=1234\u00e9 key=abcdefgh\n",
        "cred=1234 pass=abcdefgh cred=x1234\n",
        "cred_x.y=1234-56 key=abcdefgh\n",
        "pw.cred=1234 key=abcdefgh\npw_cred=5678\n",
        "Session_key=abcdefgh session_len=12\nSESSION=ijklmnop\nsesSion=qrstuvwx\n",
        "session_len=12\nCred_key=abcdefgh CRED.password=ijklmnop\n",
        "[REDACTED:assignment] session_len=12 github-token=abcdefgh\n",
    ],
)
def test_left_names_searched_past_give_the_reference(text: str) -> None:
    _left._SUFFIXES.update(
        {"session": frozenset({"_len", "_len2", ""}), "cred": frozenset({"", "_x.y"})}
    )
    assert redact_patterns(text) == _reference.apply_patterns(text)
    long = (text * (3 * _prefilter.PIECE // len(text))).replace("\u00e9", "e")
    assert redact_patterns(long) == _reference.apply_patterns(long)


def test_cased_expression_finds_a_capital_anywhere() -> None:
    import re

    expression = re.compile(_left.cased("key").decode())
    assert [w for w in ["key", "Key", "kEy", "keY", "KEY", "kee"] if expression.fullmatch(w)] == [
        "Key",
        "kEy",
        "keY",
        "KEY",
    ]
