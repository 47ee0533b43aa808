"""Normalised variants of a command line and ANSI-C string decoding (docs/approvals.md#parsing).

A variant strips what hides a command from a matcher without changing what the
shell would run: ANSI escapes, NUL and invisible characters, fullwidth letters
(NFKC), ``$IFS`` used as a space, quotes around single words. A pure leaf.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["decode_ansi_c", "normalised_variants", "renamed_programs", "unquote_words"]


_ANSI_C = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
    "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def decode_ansi_c(body: str) -> str:
    """Decode the escapes of a ``$'…'`` string body (also ``echo -e``/``printf``)."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        head = esc[0]
        try:
            if head in "xuU" and len(esc) > 1:
                return chr(int(esc[1:], 16))
            if head.isdigit() and head < "8":
                return chr(int(esc, 8) & 0xFF)
        except (ValueError, OverflowError):
            return esc
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1].upper()) & 0x1F)
        return _SIMPLE_ESCAPES.get(esc, "\\" + esc)

    return _ANSI_C.sub(one, body)


_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
    r"|(?:\\x1b|\\033|\\e|\\u001b)\[[0-9;]*[A-Za-z]"
)
_IFS = re.compile(r"(?:\$\{IFS[^}]*\}|\$IFS\b)(?:\$\{?[1-9]\}?)?")
# The quote first, then the look back at the character before it (the same test as
# (?<!\\) in front): each alternative starts with a literal the engine skips to.
_QUOTED_WORD = re.compile(r"'(?<!\\')([^'\s;&|<>()`\\]*)'|\"(?<!\\\")([^\"\s;&|<>()`\\]*)\"")
# "{rm,-rf,/}" as a whole word: bash brace expansion makes it three words.
# The part before the first comma has no comma itself: the two runs cannot overlap.
_BRACE_WORD = re.compile(r"(?:(?<=^)|(?<=[\s;&|(]))\{([^{}\s$,]*,[^{}\s]*)\}(?=$|[\s;&|)])")
_HIDDEN = ("Cc", "Cf", "Cs")
_ESCAPED = re.compile(r"\\([A-Za-z0-9_./~-])")


# The ASCII characters of categories Cc/Cf/Cs but tab and newline: deleted by translate().
_ASCII_CONTROLS = dict.fromkeys([*range(0x09), *range(0x0B, 0x20), 0x7F])
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _strip_controls(text: str) -> str:
    text = _ANSI.sub("", text).translate(_ASCII_CONTROLS)
    if text.isascii():
        return text
    # Only the non-ASCII characters need a look at their Unicode category.
    return _NON_ASCII.sub(lambda m: "" if unicodedata.category(m[0]) in _HIDDEN else m[0], text)


# A character some normalisation acts on (an escape, a quote, $IFS, a brace word): one
# search in C where a generator looked for each in turn.
_MAY_VARY = re.compile(r"[\x1b\\'\"${]")


def normalised_variants(line: str) -> tuple[str, ...]:
    """The normalised forms of ``line`` (docs/approvals.md#parsing), deduplicated, without ``line``.

    ANSI escapes, NUL and other control/format characters are stripped and NFKC
    applied; then ``$IFS`` becomes a space and a whole-word ``{a,b}`` its words; then quotes around a single word and
    backslashes before ordinary characters are removed. Quotes that group spaces or
    shell operators stay, so that ``echo "a; reboot"`` does not turn into two commands.
    """
    if line.isascii() and not _MAY_VARY.search(line) and line.isprintable():
        return ()
    clean = line
    if not line.isascii() or not line.isprintable() or "\\" in line:
        clean = unicodedata.normalize("NFKC", _strip_controls(line))
    # _IFS holds "$IFS" or "${IFS", _BRACE_WORD a "{": skipped when the text has neither.
    spaced = _IFS.sub(" ", clean) if "IFS" in clean else clean
    if "{" in spaced:
        spaced = _BRACE_WORD.sub(lambda m: m.group(1).replace(",", " "), spaced)
    unquoted = unquote_words(spaced)
    out: dict[str, None] = {}
    for variant in (clean, spaced, unquoted):
        if variant != line:
            out.setdefault(variant, None)
    return tuple(out)


def unquote_words(text: str) -> str:
    """Remove quotes around single words and backslashes before ordinary characters."""
    return _ESCAPED.sub(r"\1", _QUOTED_WORD.sub(lambda m: m.group(1) or m.group(2) or "", text))


# hash -p PATH NAME: from then on NAME runs PATH (hash -p /bin/rm ls; ls -rf ~).
_HASHED = re.compile(r"(?<![\w.-])hash[ \t][^;&|\n]{0,80}?-p[ \t]*+(\S++)[ \t]++([\w.+-]++)")


def renamed_programs(line: str) -> list[str]:
    """The line with each name ``hash -p PATH NAME`` binds replaced by PATH after it."""
    out: list[str] = []
    for m in _HASHED.finditer(line):
        path, name = m.group(1), m.group(2)
        word = re.compile(rf"(?<![\w./-]){re.escape(name)}(?![\w./-])")
        rest = line[m.end() :]
        parts = word.split(rest)  # (a path is put in as it is: no escapes to read)
        out.append(line[: m.end()] + path.join(parts))
    return out
