"""The PEM block finder gives the ``private-key`` regex's matches (``_pem.py``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from multiplex.redaction._patterns import PATTERNS
from multiplex.redaction._pem import private_key_spans

_REGEX = PATTERNS[0].regex
_PARTS = [
    "-----BEGIN",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "-----END RSA PRIVATE KEY-----",
    "-----END",
    "PRIVATE KEY",
    " BLOCK",
    "-----",
    "----",
    "-",
    "RSA ",
    "\n",
    "MIIEpAIBAAK",
    "x",
]


def _regex_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _REGEX.finditer(text)]


def test_the_finder_is_for_the_first_shape() -> None:
    assert PATTERNS[0].kind == "private-key"


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=30).map("".join))
def test_spans_are_the_regex_matches(text: str) -> None:
    assert private_key_spans(text) == _regex_spans(text)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(65_530, 65_542), st.sampled_from(["-----", "-----END RSA PRIVATE KEY-----", "x"])
)
def test_a_body_stops_where_the_regex_bound_does(size: int, after: str) -> None:
    # A body at, just under and just over 64 KiB, then a stop, an end line or more body.
    for body in ("A" * size, ("A" * 63 + "\n") * (size // 64) + "-" * (size % 64)):
        text = "-----BEGIN RSA PRIVATE KEY-----" + body + after + "tail -----BEGIN PRIVATE KEY-----"
        assert private_key_spans(text) == _regex_spans(text)
