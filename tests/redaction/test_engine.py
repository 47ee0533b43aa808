"""The Hyperscan engine gives the pure-Python output exactly, and its absence is survivable."""

from __future__ import annotations

import logging
import re
import sys
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex.redaction import (
    KnownValues,
    Redactor,
    _engine,
    _prefilter,
    redact_always,
    redact_patterns,
)
from multiplex.redaction._forms import disguised_forms
from multiplex.redaction._patterns import PATTERNS, SecretPattern, apply_patterns
from tests.redaction import _reference
from tests.redaction.test_redaction import ADVERSARIAL, LOOK_ALIKES, SECRETS
from tests.strategies import known_value_sets, redaction_texts

needs_engine = pytest.mark.skipif(
    _engine.backend() is None, reason="the hyperscan wheel is not installed here"
)


def _reference_known(text: str, values: list[str]) -> str:
    """Layer 1 as the frozen implementation matches, over today's forms of ``values``.

    The frozen trie regex is given today's forms (each tested on its own in
    ``test_redaction.py``) and runs over the text without line breaks; a match
    is carried back to the text by an index of every character kept, and
    replaced whole, the line breaks it spans with it.
    """
    known = _reference.KnownValues(values)
    if not known:
        return text
    known._forms = KnownValues(values).all_forms()
    kept = [i for i, ch in enumerate(text) if ch not in "\r\n"]
    flat = "".join(text[i] for i in kept)
    pieces, last = [], 0
    for m in known._compiled().finditer(flat):
        start, end = kept[m.start()], kept[m.end() - 1] + 1
        pieces += [text[last:start], "[REDACTED:known]"]
        last = end
    return "".join([*pieces, text[last:]])


def reference(text: str, own: list[str], others: list[str], layer2: bool = True) -> str:
    """What the frozen pure-Python implementation (``tests/redaction/_reference``) gives,
    with layer 1's forms and line breaks as they are today (``_reference_known``)."""
    text = _reference_known(_reference_known(text, own), others)
    return _reference.apply_patterns(text) if layer2 else text


def reference_always(text: str, known: list[str]) -> str:
    """``redact_always`` as the frozen implementation gives it (``reference``)."""
    return reference(text, known, [])


def fallback(text: str, own: list[str], others: list[str], layer2: bool = True) -> str:
    """What today's pure-Python path (no engine) gives."""
    with _engine.pure_python():
        return Redactor(KnownValues(own), layer2=layer2, others=KnownValues(others)).redact(text)


@st.composite
def disguised_texts(draw: st.DrawFn, values: list[str]) -> str:
    """``redaction_texts`` with some of ``values``' disguises put in, some cut by a line break."""
    text = draw(redaction_texts(values))
    if not values:
        return text
    extra = []
    for value in draw(st.lists(st.sampled_from(values), max_size=3)):
        form = draw(st.sampled_from([value, *disguised_forms(value)]))
        if len(form) > 1 and draw(st.booleans()):
            cut = draw(st.integers(1, len(form) - 1))
            form = form[:cut] + draw(st.sampled_from(["\n", "\r\n"])) + form[cut:]
        extra.append(form)
    at = draw(st.integers(0, len(text)))
    return text[:at] + "".join(extra) + text[at:]


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    own, others = draw(known_value_sets()), draw(known_value_sets())
    return draw(disguised_texts(own + others)), own, others


@needs_engine
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.booleans())
def test_engine_output_is_the_pure_python_output(
    case: tuple[str, list[str], list[str]], layer2: bool
) -> None:
    text, own, others = case
    engine = Redactor(KnownValues(own), layer2=layer2, others=KnownValues(others))
    assert engine.redact(text) == reference(text, own, others, layer2)


@needs_engine
@settings(max_examples=260, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(redaction_texts())
def test_layer2_engine_output_is_the_reference(text: str) -> None:
    assert redact_patterns(text) == _reference.apply_patterns(text)


def test_empty_text_is_returned_as_the_reference_returns_it() -> None:
    # redact_patterns skips the patterns for "" (a cell's empty streams).
    assert redact_patterns("") == _reference.apply_patterns("") == ""


# Without needs_engine: the fallback shares the per-match code with the engine,
# so it too is held to the frozen copy, wheel or no wheel. Fewer examples than the
# engine's test: each compiles its values' forms into Python regexes (most of its time).
@settings(max_examples=130, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.booleans())
def test_pure_python_output_is_the_reference(
    case: tuple[str, list[str], list[str]], layer2: bool
) -> None:
    text, own, others = case
    assert fallback(text, own, others, layer2) == reference(text, own, others, layer2)
    assert apply_patterns(text) == _reference.apply_patterns(text)


@needs_engine
@settings(max_examples=300, deadline=None)
@given(known_value_sets(), redaction_texts(["abcdef12", "s3cr3t-Value!/+?&"]))
def test_known_value_membership_agrees(values: list[str], text: str) -> None:
    with _engine.pure_python():
        pure = KnownValues(values)
        expected = (text in pure, pure.redact(text))
    engine = KnownValues(values)
    assert (text in engine, engine.redact(text)) == expected


@needs_engine
@pytest.mark.parametrize(
    "text",
    [c[1] for c in SECRETS] + LOOK_ALIKES,
    ids=[c[0] for c in SECRETS] + [f"look-alike-{i}" for i in range(len(LOOK_ALIKES))],
)
def test_engine_agrees_on_every_documented_case(text: str) -> None:
    known = ["own-secret-value-1"]
    assert redact_patterns(text) == apply_patterns(text) == _reference.apply_patterns(text)
    expected = reference_always(text, known)
    assert redact_always(text, KnownValues(known)) == expected
    with _engine.pure_python():
        assert redact_always(text, KnownValues(known)) == expected


@needs_engine
@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_engine_agrees_on_adversarial_inputs(text: str) -> None:
    own, others = ["a" * 40, "key=key=", "own-secret-value-1"], ["other-profile-secret-2"]
    engine = Redactor(KnownValues(own), others=KnownValues(others))
    expected = reference(text, own, others)
    assert engine.redact(text) == expected
    assert fallback(text, own, others) == expected


@needs_engine
def test_too_many_occurrences_fall_back_to_the_regex() -> None:
    # One occurrence per character: listing them would cost more than the regex.
    text = "x" * 50_000 + "abcdef" * 20_000
    values = ["abcdef", "xxxxxx"]
    assert KnownValues(values).redact(text) == reference(text, values, [], layer2=False)


@needs_engine
def test_long_and_nul_values_are_matched_whole() -> None:
    long_value = "L" * 300 + "-long-credential"
    nul_value = "nul\x00inside-it"
    known = KnownValues([long_value, nul_value])
    text = f"a {long_value} b {long_value[:-1]} c {nul_value} d nul"
    assert known.redact(text) == (
        f"a [REDACTED:known] b {long_value[:-1]} c [REDACTED:known] d nul"
    )


@needs_engine
def test_threads_share_a_matcher() -> None:
    # Each thread scans with its own scratch space.
    own, others = ["own-secret-value-1"], [f"other-secret-{i:03d}-value" for i in range(50)]
    redactor = Redactor(KnownValues(own), others=KnownValues(others))
    texts = [
        f"run {i}: {others[i % 50]} API_KEY=v{i}alue ghp_{'a1' * 18} {own[0]}\n" * 200
        for i in range(16)
    ]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(redactor.redact, texts * 4))
    assert got == [reference(t, own, others) for t in texts] * 4


# -- piece by piece ----------------------------------------------------------------


@contextmanager
def small_pieces(size: int = 24) -> Iterator[None]:
    """Within the block, long texts are cut into pieces of about ``size`` characters."""
    before = _prefilter.PIECE
    _prefilter.PIECE = size
    try:
        yield
    finally:
        _prefilter.PIECE = before


@st.composite
def multiline_cases(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    own, others = draw(known_value_sets()), draw(known_value_sets())
    lines = draw(st.lists(disguised_texts(own + others), min_size=2, max_size=8))
    text = draw(st.sampled_from(["\n", "\r\n", "\n\n"])).join(lines)
    if draw(st.booleans()):  # only ASCII text is cut into pieces
        text = text.encode("ascii", "ignore").decode("ascii")
    return text, own, others


def test_pieces_end_at_newlines() -> None:
    text = "".join(f"line {i} API_KEY=value{i}\n" for i in range(40))
    with small_pieces(50):
        pieces = list(_prefilter.line_pieces(text))
    assert len(pieces) > 5 and "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces)


# Each example compiles two matchers of every disguised form (about 0.1 s each):
# fewer examples than the other properties, still hundreds of pieces each.
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(multiline_cases(), st.booleans())
def test_pieces_give_the_whole_texts_output(
    case: tuple[str, list[str], list[str]], layer2: bool
) -> None:
    text, own, others = case
    expected = reference(text, own, others, layer2)
    expected_always = reference_always(text, own)
    with small_pieces():
        assert (
            Redactor(KnownValues(own), layer2=layer2, others=KnownValues(others)).redact(text)
            == expected
        )
        assert redact_always(text, KnownValues(own)) == expected_always
        assert redact_patterns(text) == _reference.apply_patterns(text)
        assert fallback(text, own, others, layer2) == expected


@pytest.mark.parametrize("engine", [True, False], ids=["engine", "pure-python"])
def test_pieces_keep_what_spans_lines(engine: bool) -> None:
    # A PEM block and a known value holding a newline span the pieces' cuts.
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEpAIBAAKCAQEA1234\n" * 6
    own = ["first line\nsecond line of a credential"]
    lines = [c[1] for c in SECRETS] + LOOK_ALIKES
    text = "\n".join([*lines[:20], pem + "-----END RSA PRIVATE KEY-----", *lines[20:], own[0]])
    text += "\n" + pem  # cut short: masked to the end
    expected = reference(text, own, ["other-profile-secret-2"])
    with small_pieces(), _engine.pure_python() if not engine else _nothing():
        redactor = Redactor(KnownValues(own), others=KnownValues(["other-profile-secret-2"]))
        assert redactor.redact(text) == expected
        assert redact_patterns(text) == _reference.apply_patterns(text)
        plain = text.replace(own[0], "x")
        assert Redactor(KnownValues(["abcdef12"])).redact(plain) == reference(
            plain, ["abcdef12"], []
        )
    assert "[REDACTED:private-key]" in expected and "second line" not in expected


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _admits_newline(items: object) -> bool:
    """Whether the parsed regex ``items`` can match a newline anywhere, or tests a line edge."""
    from re import _constants as c

    def in_class(members: list[tuple[object, object]]) -> bool:
        hit, negate = False, False
        for op, arg in members:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                hit |= arg == 10
            elif op is c.RANGE:
                hit |= arg[0] <= 10 <= arg[1]  # type: ignore[index]
            elif op is c.CATEGORY:
                hit |= arg in (c.CATEGORY_SPACE, c.CATEGORY_NOT_WORD, c.CATEGORY_NOT_DIGIT)
            else:
                raise AssertionError(f"unexpected class member {op}")
        return hit != negate

    for op, arg in items:  # type: ignore[attr-defined]
        if (op is c.LITERAL and arg == 10) or (op is c.NOT_LITERAL and arg != 10):
            return True
        if op is c.IN and in_class(arg):
            return True
        if op is c.AT:
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and _admits_newline(arg[2]):
            return True
        if op in (c.SUBPATTERN, c.ATOMIC_GROUP) and _admits_newline(arg[-1]):
            return True
        if op in (c.ASSERT, c.ASSERT_NOT) and _admits_newline(arg[1]):
            return True
        if op is c.BRANCH and any(_admits_newline(b) for b in arg[1]):
            return True
    return False


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.kind for p in PATTERNS])
def test_only_the_first_shape_spans_lines(pattern: SecretPattern) -> None:
    # What lets long text be redacted piece by piece (docs/redaction.md, "Engine").
    from re import _parser

    assert not pattern.regex.flags & (re.DOTALL | re.MULTILINE), pattern.kind  # "." and "^"
    spans = _admits_newline(_parser.parse(pattern.regex.pattern))
    assert spans == (pattern is PATTERNS[0]), pattern.kind
    assert PATTERNS[0].kind == "private-key"


# -- anchors ---------------------------------------------------------------------


def _prefixes(items: object) -> tuple[set[str], bool]:
    """Literals every match of the parsed ``items`` starts with (one per branch), and
    whether they are the whole of what ``items`` match."""
    from re import _constants as c

    out = {""}
    for op, arg in items:  # type: ignore[attr-defined]
        if op is c.LITERAL:
            out = {p + chr(arg) for p in out}
        elif op is c.IN and all(o in (c.LITERAL, c.RANGE) for o, _ in arg):
            chars = [chr(v) for o, v in arg if o is c.LITERAL]
            chars += [chr(x) for o, v in arg if o is c.RANGE for x in range(v[0], v[1] + 1)]
            out = {p + ch for p in out for ch in chars}
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and arg[0] >= 1:
            first, _ = _prefixes(arg[2])  # the first round is not optional
            return {p + q for p in out for q in first}, False
        elif op is c.MAX_REPEAT and arg[:2] == (0, 1):  # optional: with or without
            body, whole = _prefixes(arg[2])
            if not whole:
                return out, False
            out = {p + q for p in out for q in body | {""}}
        elif op is c.SUBPATTERN or op is c.BRANCH:
            branches = [arg[-1]] if op is c.SUBPATTERN else arg[1]
            parts = [_prefixes(b) for b in branches]
            out = {p + q for p in out for qs, _ in parts for q in qs}
            if not all(whole for _, whole in parts):
                return out, False
        elif op not in (c.ASSERT, c.ASSERT_NOT):  # a look-around consumes nothing
            return out, False
    return out, True


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.kind for p in PATTERNS])
def test_every_match_starts_with_an_anchor(pattern: SecretPattern) -> None:
    from re import _parser

    if not pattern.anchors:  # a gated shape runs its regex over the whole text
        assert pattern.kind == "discord-bot-token"
        return
    prefixes, _ = _prefixes(_parser.parse(pattern.regex.pattern))
    for prefix in prefixes:
        assert any(prefix.startswith(a) for a in pattern.anchors), prefix


def test_anchors_cannot_be_made_by_a_mask() -> None:
    # The engine looks for anchors once; a mask ("[...]") must not create one
    # with the text around it, and anchors are searched for as ASCII bytes.
    for pattern in PATTERNS:
        for anchor in pattern.anchors:
            assert anchor.isascii() and "[" not in anchor and "]" not in anchor, anchor
            assert anchor == anchor.lower() or not pattern.fold, anchor


def test_no_pattern_matches_the_empty_string() -> None:
    # The engine skips from match end to the next anchor: an empty match would stall it.
    for pattern in PATTERNS:
        assert pattern.regex.match("") is None, pattern.kind


# -- without the engine -------------------------------------------------------------


@pytest.fixture
def no_hyperscan(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if the hyperscan wheel were missing: its import fails."""
    monkeypatch.setitem(sys.modules, "hyperscan", None)
    monkeypatch.setattr(_engine._State, "module", None)
    yield


def test_missing_engine_warns_once_and_still_masks(
    no_hyperscan: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="multiplex.redaction")
    assert _engine.engine_name() == "python"
    own = KnownValues(["own-secret-value-1"])
    others = KnownValues(["other-profile-secret-2"])
    text = "own-secret-value-1 other-profile-secret-2 API_KEY=abc123def ghp_" + "a1" * 18
    out = Redactor(own, others=others).redact(text)
    assert out == (
        "[REDACTED:known] [REDACTED:known] API_KEY=[REDACTED:assignment] [REDACTED:github-token]"
    )
    assert redact_patterns("token=abcdef") == "token=[REDACTED:assignment]"
    warnings = [r for r in caplog.records if "hyperscan" in r.getMessage()]
    assert len(warnings) == 1
    assert "pure-Python" in warnings[0].getMessage()


def test_engine_failure_at_run_time_falls_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A wheel that imports but cannot compile on this CPU.
    class Error(Exception):
        pass

    def database() -> object:
        raise Error("no such CPU")

    broken = types.ModuleType("hyperscan")
    broken.error = Error  # type: ignore[attr-defined]
    broken.Database = database  # type: ignore[attr-defined]
    monkeypatch.setattr(_engine._State, "module", broken)
    caplog.set_level(logging.WARNING, logger="multiplex.redaction")
    known = KnownValues(["own-secret-value-1"])
    assert known.redact("x own-secret-value-1 y") == "x [REDACTED:known] y"
    assert _engine.backend() is None
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 1


def test_pure_python_block_builds_without_the_engine() -> None:
    with _engine.pure_python():
        assert _engine.engine_name() == "python"
        assert _engine.backend() is None
    assert re.fullmatch("hyperscan|python", _engine.engine_name())
