"""Layer 1 of redaction: a profile's known secret values (``docs/redaction.md``).

A profile knows some of its secrets literally: the values of ``.env`` variables
whose names look secret, and the contents of its credential files. Those exact
strings, and the encoded forms a program is likely to print them in, are masked
wherever they occur, whatever the text around them looks like.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import ClassVar
from urllib.parse import quote, quote_plus

from multiplex._literals import trie_pattern
from multiplex.redaction import _engine
from multiplex.redaction._forms import disguised_forms
from multiplex.redaction._lines import masked, unbroken, within_text
from multiplex.redaction._literal_set import LiteralSet

__all__ = ["KNOWN_MASK", "KnownValues", "encoded_forms", "looks_secret_name"]

KNOWN_MASK = "[REDACTED:known]"

# Words of a variable name. Splits on anything that is not a letter or digit and
# on camelCase humps, so ``apiKey``, ``API_KEY`` and ``x-api-key`` read the same.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Whole words that make a name secret on their own.
_SECRET_WORDS = frozenset(
    {
        "KEY",
        "KEYS",
        "TOKEN",
        "TOKENS",
        "PASS",
        "PASSWD",
        "PASSWORD",
        "PASSWORDS",
        "PASSPHRASE",
        "PW",
        "CREDS",
        "AUTH",
        "AUTHN",
        "AUTHZ",
        "AUTHORIZATION",
        "PRIVATE",
        "DSN",
        "PAT",
        "SALT",
        "SIGNATURE",
    }
)
# Suffixes of compound words (``APIKEY``, ``ACCESSTOKEN``, ``DBPASS``, ``OAUTH``).
_SECRET_SUFFIXES = ("KEY", "KEYS", "TOKEN", "TOKENS", "PASS", "PASSWORD", "PASSWD", "AUTH")
# Fragments that are secret wherever they sit inside a word.
_SECRET_FRAGMENTS = ("SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "SESSION", "COOKIE")
# English words that merely end like a secret word: the false friends.
_FALSE_FRIENDS = frozenset(
    {
        "MONKEY",
        "TURKEY",
        "HOCKEY",
        "DONKEY",
        "JOCKEY",
        "WHISKEY",
        "HOTKEY",
        "HOTKEYS",
        "BYPASS",
        "COMPASS",
        "SURPASS",
        "SECRETARY",
        "SECRETARIES",
    }
)
# A last word saying the variable holds *about* a secret, not the secret itself
# (``SSH_KEY_PATH``, ``PASSWORD_HINT``, ``TOKEN_URL``, ``SESSION_TIMEOUT``).
_DESCRIPTIVE_LAST_WORDS = frozenset(
    {
        "FILE",
        "FILES",
        "PATH",
        "DIR",
        "URL",
        "URI",
        "ENDPOINT",
        "HOST",
        "PORT",
        "NAME",
        "USER",
        "USERNAME",
        "EMAIL",
        "HINT",
        "ENABLED",
        "DISABLED",
        "ENABLE",
        "DISABLE",
        "REQUIRED",
        "TIMEOUT",
        "TTL",
        "EXPIRY",
        "EXPIRES",
        "LENGTH",
        "LEN",
        "SIZE",
        "TYPE",
        "MODE",
        "FORMAT",
        "ALGORITHM",
        "ALG",
        "PROVIDER",
        "METHOD",
        "REGION",
        "VERSION",
        "COUNT",
        "LIMIT",
    }
)


def _name_words(name: str) -> list[str]:
    return [w.upper() for w in _WORD.findall(name)]


def _is_secret_word(word: str) -> bool:
    if word in _FALSE_FRIENDS:
        return False
    if word in _SECRET_WORDS or any(f in word for f in _SECRET_FRAGMENTS):
        return True
    # KEYBOARD, KEYMAP, KEYRING, TOKENIZERS, AUTHOR: the secret word starts a
    # longer word, which is never the secret itself.
    return any(word.endswith(s) for s in _SECRET_SUFFIXES)


# Log lines repeat the same few names; layer 2 asks about each occurrence.
@lru_cache(maxsize=4096)
def looks_secret_name(name: str) -> bool:
    """Whether a variable or field name looks like it holds a secret.

    Case and separators do not matter (``API_KEY``, ``apiKey``, ``x-api-key``).
    A name is secret when one of its words is a secret word (KEY, TOKEN, SECRET,
    PASSWORD, PASSWD, PASS, PWD in a longer name, CREDENTIAL(S), AUTH, PRIVATE,
    SESSION, COOKIE, DSN, PAT, SALT, SIGNATURE, or a compound ending in one such
    as ``APIKEY`` or ``OAUTH``). It is not secret when that word only starts a
    longer word (KEYBOARD, TOKENIZERS, AUTHOR, PATH), is an English false friend
    (MONKEY, BYPASS), or the name ends with a word that describes the secret
    rather than holding it (``*_FILE``, ``*_PATH``, ``*_URL``, ``*_HINT``,
    ``*_ENABLED``, ``*_TIMEOUT`` ...). ``PWD`` and ``OLDPWD`` alone are the shell's
    working directories, not passwords.
    """
    words = _name_words(name)
    if not words or words[-1] in _DESCRIPTIVE_LAST_WORDS:
        return False
    if len(words) > 1 and "PWD" in words:
        return True
    return any(_is_secret_word(w) for w in words)


def encoded_forms(value: str) -> tuple[str, ...]:
    """The raw value, then its base64 and URL-encoded forms, without duplicates.

    Base64 is standard and URL-safe, each with and without padding (of the UTF-8
    bytes); URL encoding is ``quote`` (``/`` kept and escaped) and ``quote_plus``.
    """
    raw = value.encode("utf-8", "surrogatepass")
    std = base64.b64encode(raw).decode("ascii")
    url = base64.urlsafe_b64encode(raw).decode("ascii")
    forms = (
        value,
        std,
        std.rstrip("="),
        url,
        url.rstrip("="),
        quote(value),
        quote(value, safe=""),
        quote_plus(value),
    )
    return tuple(dict.fromkeys(forms))


def _embedded_base64_cores(raw: bytes) -> Iterator[str]:
    """The characters that spell ``raw`` inside a longer base64 stream.

    ``base64("user:" + password)`` (HTTP Basic auth) does not contain
    ``base64(password)``: the value's bits land at a different offset. For each of
    the three offsets, the characters whose six bits all come from ``raw`` are
    the same whatever surrounds it, so they are matched as well.
    """
    n = len(raw)
    for shift in range(3):
        encoded = binascii.b2a_base64(b"\0" * shift + raw, newline=False).decode("ascii")
        first = -(-8 * shift // 6)  # ceil: first character built only from raw's bits
        last = 8 * (shift + n) // 6  # floor: end of the last such character
        core = encoded[first:last]
        yield core
        yield core.translate(_URLSAFE)


_URLSAFE = str.maketrans("+/", "-_")


def _all_forms(value: str, min_length: int) -> Iterator[str]:
    yield from encoded_forms(value)
    yield from disguised_forms(value)
    stripped = value.strip()
    if stripped != value and len(stripped) >= min_length:
        yield from encoded_forms(stripped)
        yield from disguised_forms(stripped)
    # The value as it appears inside a JSON string (escaped quotes, newlines).
    yield json.dumps(value)[1:-1]
    yield json.dumps(value, ensure_ascii=False)[1:-1]
    yield from _embedded_base64_cores(value.encode("utf-8", "surrogatepass"))


class KnownValues:
    """Immutable matcher over literal secret values; masks every occurrence of any value or encoded form.

    Values shorter than ``MIN_LENGTH`` characters are ignored: a secret that short
    would mask ordinary words and numbers everywhere, and is not worth guarding
    by text matching. Each kept value is matched raw, stripped of surrounding
    whitespace, JSON-escaped, base64 (standard/URL-safe, padded or not, and
    embedded inside a longer base64 stream), URL-encoded, reversed, upper- and
    lower-cased, spelled out with a separator between its characters, base32
    and hex; and any of those cut by line breaks anywhere. At any position the
    longest match wins. Matching is linear in the text for a fixed set of values;
    the matcher is built on first use.
    """

    MIN_LENGTH: ClassVar[int] = 6

    __slots__ = ("_fast", "_forms", "_pattern", "_values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        kept = {v for v in values if isinstance(v, str) and len(v) >= self.MIN_LENGTH}
        self._values: frozenset[str] = frozenset(kept)
        self._forms: frozenset[str] | None = None
        self._pattern: re.Pattern[str] | None = None
        # None: not built yet; False: built without the engine.
        self._fast: LiteralSet | bool | None = None

    def all_forms(self) -> frozenset[str]:
        """Every form matched: each value's, without line breaks, at least ``MIN_LENGTH`` long."""
        if self._forms is None:
            # Matched over text without line breaks (_lines.py): so are the forms.
            forms = {unbroken(f) for v in self._values for f in _all_forms(v, self.MIN_LENGTH)}
            # Encoded cores of short values can be shorter than the value; the
            # floor applies to every form so ordinary words are never masked.
            self._forms = frozenset(f for f in forms if len(f) >= self.MIN_LENGTH)
        return self._forms

    def engine_set(self) -> LiteralSet | None:
        """The Hyperscan matcher, or None to use the regex (no engine, or it failed)."""
        fast = self._fast
        if fast is None:
            fast = False
            hs = _engine.backend()
            if hs is not None:
                try:
                    fast = LiteralSet(hs, self.all_forms())
                except hs.error as exc:
                    _engine.disable(f"compiling {len(self._values)} known values: {exc}")
            # Benign race: two threads may both build; they build the same matcher.
            self._fast = fast
        return fast if isinstance(fast, LiteralSet) else None

    def _compiled(self) -> re.Pattern[str]:
        """The pure-Python matcher: one regex over every form."""
        if self._pattern is None:
            forms = self.all_forms()
            source = trie_pattern(forms)
            if source is None:
                ordered = sorted(forms, key=lambda f: (-len(f), f))
                source = "|".join(map(re.escape, ordered))
            # Benign race: two threads may both compile; they build the same pattern.
            self._pattern = re.compile(source)
        return self._pattern

    def flat_spans(self, flat: str | bytes) -> list[tuple[int, int]]:
        """Where known values or forms occur in ``flat``, a text without line
        breaks (or its bytes, if it is ASCII): spans, in order, apart (leftmost,
        then longest)."""
        if not self._values or not flat:
            return []
        fast = self.engine_set()
        if fast is not None:
            spans = fast.spans(flat) if isinstance(flat, bytes) else fast.text_spans(flat)
            if spans is not None:
                return spans
        text = flat.decode("ascii") if isinstance(flat, bytes) else flat
        return [m.span() for m in self._compiled().finditer(text)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where known values or forms occur in ``text``: character spans, in order, apart.

        Line breaks do not count: a match may run across them (and holds those
        it runs across).
        """
        flat = unbroken(text)
        return within_text(text, flat, self.flat_spans(flat))

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of a known value or form replaced by ``[REDACTED:known]``."""
        return masked(text, self.spans(text), KNOWN_MASK)

    def union(self, other: KnownValues) -> KnownValues:
        """A matcher over the values of both."""
        return KnownValues(self._values | other._values)

    def __contains__(self, text: object) -> bool:
        """Whether any known value (or encoded form) occurs in ``text``."""
        if not self._values or not isinstance(text, str) or not text:
            return False
        flat = unbroken(text)
        fast = self.engine_set()
        if fast is not None:
            spans = fast.spans(flat.encode("utf-8", "surrogatepass"))
            if spans is not None:
                return bool(spans)
        return self._compiled().search(flat) is not None

    def __len__(self) -> int:
        return len(self._values)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KnownValues) and self._values == other._values

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        # Never the values themselves.
        return f"KnownValues(<{len(self._values)} values>)"
