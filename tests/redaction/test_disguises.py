"""docs/redaction.md, "Layer 1": a known value spelled differently, or cut by line breaks, is masked.

Hostile: each case is what an agent told to keep a secret out of its output, or
trying to carry it out, would print instead of the value itself.
"""

from __future__ import annotations

import base64
import codecs
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiplex.redaction import KnownValues, Redactor, _engine, redact_always

VALUE = "sk-alphaSECRETvalue42"
_RAW = VALUE.encode()
_HEX = _RAW.hex()
_B32 = base64.b32encode(_RAW).decode()

DISGUISES = {
    "reversed": VALUE[::-1],
    "upper": VALUE.upper(),
    "lower": VALUE.lower(),
    "reversed-upper": VALUE[::-1].upper(),
    "reversed-lower": VALUE[::-1].lower(),
    "rot13": codecs.encode(VALUE, "rot13"),
    "rot13-reversed": codecs.encode(VALUE, "rot13")[::-1],
    "base64-of-reversed": base64.b64encode(VALUE[::-1].encode()).decode(),
    "base64-of-reversed-unpadded": base64.b64encode(VALUE[::-1].encode()).decode().rstrip("="),
    "spaces": " ".join(VALUE),
    "dashes": "-".join(VALUE),
    "dots": ".".join(VALUE),
    "commas": ",".join(VALUE),
    "comma-space": ", ".join(VALUE),
    "colons": ":".join(VALUE),
    "underscores": "_".join(VALUE),
    "slashes": "/".join(VALUE),
    "pipes": "|".join(VALUE),
    "tabs": "\t".join(VALUE),
    "newlines": "\n".join(VALUE),
    "crlf": "\r\n".join(VALUE),
    "base32": _B32,
    "base32-unpadded": _B32.rstrip("="),
    "base32-lower": _B32.lower(),
    "base32-lower-unpadded": _B32.lower().rstrip("="),
    "hex": _HEX,
    "hex-upper": _HEX.upper(),
    "hex-spaced": " ".join(_HEX[i : i + 2] for i in range(0, len(_HEX), 2)),
    "hex-colons-upper": ":".join(_HEX.upper()[i : i + 2] for i in range(0, len(_HEX), 2)),
    "hex-backslash-x": "".join(f"\\x{b:02x}" for b in _RAW),
    "hex-backslash-x-upper": "".join(f"\\x{b:02X}" for b in _RAW),
    "hex-percent": "".join(f"%{b:02X}" for b in _RAW),
    "octal-escapes": "".join(f"\\{b:03o}" for b in _RAW),
    "unicode-escapes": "".join(f"\\u{ord(c):04x}" for c in VALUE),
    "folded-every-5": "\n".join(VALUE[i : i + 5] for i in range(0, len(VALUE), 5)),
    "base32-folded": "\r\n".join(_B32[i : i + 8] for i in range(0, len(_B32), 8)),
    "hex-folded": "\n".join(_HEX[i : i + 16] for i in range(0, len(_HEX), 16)),
    # two disguises at once, invisible separators, other encodings (each leaked before)
    "reversed-spaces": " ".join(VALUE[::-1]),
    "upper-spaces": " ".join(VALUE.upper()),
    "lower-dashes": "-".join(VALUE.lower()),
    "reversed-upper-dots": ".".join(VALUE[::-1].upper()),
    "zero-width-spaces": "\u200b".join(VALUE),
    "word-joiners": "\u2060".join(VALUE),
    "hex-of-reversed": VALUE[::-1].encode().hex(),
    "base64-backwards": base64.b64encode(_RAW).decode()[::-1],
    "base64-twice": base64.b64encode(base64.b64encode(_RAW)).decode(),
    "base85": base64.b85encode(_RAW).decode(),
    "ascii85": base64.a85encode(_RAW).decode(),
    "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in VALUE),
    "html-decimal": "".join(f"&#{ord(c)};" for c in VALUE),
    "html-hex": "".join(f"&#x{ord(c):x};" for c in VALUE),
    # a list of its characters: print(list(value)), JSON, a shell array's words
    "python-list": "', '".join(VALUE),
    "json-list": '", "'.join(VALUE),
    "json-list-compact": '","'.join(VALUE),
    "quoted-words": "' '".join(VALUE),
    "double-quoted-words": '" "'.join(VALUE),
}


def test_a_value_printed_as_a_list_of_its_characters_is_masked() -> None:
    known = KnownValues([VALUE])
    assert known.redact(str(list(VALUE))) == "['[REDACTED:known]']"
    assert known.redact(json.dumps(list(VALUE))) == '["[REDACTED:known]"]'
    assert known.redact(str(list("an ordinary sentence"))) == str(list("an ordinary sentence"))


@pytest.mark.parametrize("engine", [True, False], ids=["engine", "pure-python"])
@pytest.mark.parametrize("form", DISGUISES.values(), ids=DISGUISES.keys())
def test_each_disguise_of_a_known_value_is_masked(form: str, engine: bool) -> None:
    with _engine.pure_python() if not engine else _nothing():
        known = KnownValues([VALUE])
        out = known.redact(f"line one\nleaked: {form} (done)\nlast line")
        assert out == "line one\nleaked: [REDACTED:known] (done)\nlast line"
        assert f"x{form}y" in known
        red = Redactor(KnownValues(), others=KnownValues([VALUE]))
        assert red.redact(f"other profile's {form}.") == "other profile's [REDACTED:known]."
        assert redact_always(form, known) == "[REDACTED:known]"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


@st.composite
def cut_anywhere(draw: st.DrawFn, value: str) -> str:
    """``value`` with a line break (``\\n`` or ``\\r\\n``) at any of its inner points."""
    cuts = draw(st.sets(st.integers(1, len(value) - 1), min_size=1))
    pieces, last = [], 0
    for cut in sorted(cuts):
        pieces.append(value[last:cut])
        last = cut
    pieces.append(value[last:])
    breaks = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(pieces) - 1))
    return pieces[0] + "".join(b + p for b, p in zip(breaks, pieces[1:], strict=False))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([VALUE, VALUE[::-1], _B32, _HEX.upper()]).flatmap(cut_anywhere),
    st.sampled_from(["", "a", "prefix text ", "ends with a break\n"]),
    st.sampled_from(["", "b", " suffix text", "\nnext line"]),
)
def test_a_value_cut_by_line_breaks_anywhere_is_masked(cut: str, before: str, after: str) -> None:
    known = KnownValues([VALUE])
    out = known.redact(before + cut + after)
    assert out == before + "[REDACTED:known]" + after
    assert out == Redactor(known).redact(before + cut + after)


def test_a_folded_base64_credential_file_is_masked() -> None:
    # `base64` wraps at 76 columns: a credential file's encoding, as `base64 creds.json` prints it.
    content = '{"type": "service_account", "private_key_id": "0123456789abcdef0123"}\n' * 4
    encoded = base64.b64encode(content.encode()).decode()
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    assert "\n" in wrapped
    out = KnownValues([content]).redact(f"$ base64 creds.json\n{wrapped}\n$ ")
    assert out == "$ base64 creds.json\n[REDACTED:known]\n$ "


def test_values_and_forms_below_the_floor_are_not_masked() -> None:
    short = "Ab1-x"  # five characters: no form of it is masked, however spelled
    assert len(short) < KnownValues.MIN_LENGTH
    known = KnownValues([short])
    text = f"{short} {short[::-1]} {short.upper()} {' '.join(short)} {short.encode().hex()}"
    assert known.redact(text) == text
    # A short value's forms do not come in through another, longer value.
    assert (
        KnownValues([short, VALUE]).redact(f"{short[::-1]} and a\nb") == f"{short[::-1]} and a\nb"
    )


def test_an_all_lower_case_value_is_masked_upper_cased_and_lines_stay() -> None:
    known = KnownValues(["hunter-two-22"])
    text = "a\nHUNTER-TWO-22\n\nb hunter-\ntwo-22 c\n"
    assert known.redact(text) == "a\n[REDACTED:known]\n\nb [REDACTED:known] c\n"


def test_two_profiles_values_cut_by_breaks_next_to_each_other() -> None:
    own, other = "own-secret-value-1", "other-profile-secret-2"
    red = Redactor(KnownValues([own]), others=KnownValues([other]))
    text = f"{own[:4]}\n{own[4:]}{other[:9]}\r\n{other[9:]}!\n{own[::-1]}"
    assert red.redact(text) == "[REDACTED:known][REDACTED:known]!\n[REDACTED:known]"


@pytest.mark.slow
@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "a\n" * 100_000,  # every 40 characters a value cut 40 times
        "a\r\n" * 70_000,
        ("a" * 39 + "\n") * 5_000 + "a" * 40,  # cut values, one whole one at the very end
        "\n" * 200_000 + "a" * 40,
    ],
    ids=["a-newline", "a-crlf", "cut-then-whole", "breaks-then-value"],
)
def test_cut_values_take_linear_time(text: str) -> None:
    red = Redactor(KnownValues(["a" * 40, VALUE]), others=KnownValues(["b" * 40]))
    out = red.redact(text)
    assert "a" * 40 not in out.replace("\n", "").replace("\r", "")
