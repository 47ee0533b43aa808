"""The disguises of a known value that layer 1 also matches (``docs/redaction.md``).

An agent asked not to print a secret, or one trying to carry it out through its
output, can spell it differently: backwards, in another case (both at once too), a
character at a time with something between, rot13, or as base32, hex, or base64 of
the value backwards. Each such form is one more
literal in the known values' set, found in the same single pass as the value
itself. A value broken across lines is not a form: layer 1 matches over the
text with its line breaks taken out (``_lines.py``).
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Iterator

__all__ = ["disguised_forms"]

# What a program or a person puts between the characters of a value spelled out
# one at a time (a newline between them is a line break, matched without forms), and
# the invisible characters that show nothing between them.
_SEPARATORS = (" ", "-", ".", ",", ":", ";", "_", "/", "|", "\t", ", ")
# A value printed as a list of its characters: Python's repr (list(value)), JSON (with or
# without a space), a shell array's quoted words.
_LISTED = ("', '", '", "', '","', "' '", '" "')
_INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
# The separators a spelled-out value also comes with in its other letters (backwards,
# upper or lower case).
_TURNED_SEPARATORS = (" ", "-", ".")


def _hex_forms(raw: bytes) -> Iterator[str]:
    for digits in (raw.hex(), raw.hex().upper()):
        pairs = [digits[i : i + 2] for i in range(0, len(digits), 2)]
        yield digits
        yield " ".join(pairs)
        yield ":".join(pairs)
        yield "".join("\\x" + p for p in pairs)  # a C, Python or printf string
        yield "".join("%" + p for p in pairs)  # every byte URL-escaped


def disguised_forms(value: str) -> Iterator[str]:
    """The value reversed, upper- and lower-cased (reversed too), rot13 (reversed too),
    spelled out with a separator (also an invisible one, or as a list of its quoted
    characters: ``['s', 'k', …]``) between its characters, and so
    backwards or in another case, its UTF-8 bytes as base32 and hex, the reversed value's
    as base64 and hex, its base64 backwards and base64-encoded again, base85 and ascii85,
    fullwidth, and as HTML character references.

    Base32 is standard (RFC 4648), padded or not, upper or lower case. Hex is
    lower or upper case, bare, with a space or ``:`` between bytes, or every
    byte written ``\\xHH`` or ``%HH``; also octal ``\\ooo`` and ``\\uHHHH``
    escapes, as ``printf`` and ``echo -e`` read them.
    """
    backwards = value[::-1]
    yield backwards
    yield value.upper()
    yield value.lower()
    yield backwards.upper()
    yield backwards.lower()
    rot13 = codecs.encode(value, "rot13")
    yield rot13
    yield rot13[::-1]
    turned = base64.b64encode(backwards.encode("utf-8", "surrogatepass")).decode("ascii")
    yield turned
    yield turned.rstrip("=")
    for separator in _SEPARATORS + _INVISIBLE + _LISTED:
        yield separator.join(value)
    for turned_value in (backwards, value.upper(), value.lower(), backwards.upper()):
        if turned_value != value:
            yield from (separator.join(turned_value) for separator in _TURNED_SEPARATORS)
    raw = value.encode("utf-8", "surrogatepass")
    yield backwards.encode("utf-8", "surrogatepass").hex()  # the reversed value's bytes
    once = base64.b64encode(raw)
    yield once.decode("ascii")[::-1]  # its base64, read backwards
    twice = base64.b64encode(once).decode("ascii")  # base64 of its base64
    yield twice
    yield twice.rstrip("=")
    yield base64.b85encode(raw).decode("ascii")  # git's binary patches
    yield base64.a85encode(raw).decode("ascii")  # PDF and PostScript
    if value.isascii() and value.isprintable():
        # fullwidth letters (NFKC folds them back) and HTML character references
        yield "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)
        yield "".join(f"&#{ord(c)};" for c in value)
        yield "".join(f"&#x{ord(c):x};" for c in value)
    b32 = base64.b32encode(raw).decode("ascii")
    for form in (b32, b32.lower()):
        yield form
        yield form.rstrip("=")
    yield from _hex_forms(raw)
    yield "".join(f"\\{b:03o}" for b in raw)
    if value.isascii():
        yield "".join(f"\\u{ord(c):04x}" for c in value)
        yield "".join(f"\\u{ord(c):04X}" for c in value)
