"""Layer 2 of redaction: secrets recognised by their shape (``docs/redaction.md``).

Vendor-prefixed token formats, ``KEY=value`` assignments with secret-looking
names, Authorization and Cookie headers, PEM private keys, JWTs and passwords in
connection strings. Patterns run one after another, most specific first, over
the text the previous one produced; a later pattern never masks inside an
earlier mask. This module is the reference: :func:`apply_patterns` runs every
regex over the whole text; :mod:`._prefilter` gives the same result faster.

Every regex runs in time linear in the text: repetitions are bounded and mostly
possessive, no quantifier nests over overlapping classes, and each unprefixed
pattern starts with a look-behind that admits only the first character of a run,
so a long run of look-alike characters is walked once, not once per position.
Where a token has a literal lead (``ghp_``, ``AKIA``) the lead comes first and the
word-boundary look-behind after it, which lets the regex engine jump between
occurrences of the lead instead of trying every position.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from tests.redaction._reference._known import looks_secret_name
from tests.redaction._reference._vendors import B64URL, DASHED, DOTTED, VENDOR, lead

__all__ = [
    "KINDS",
    "MASK_PREFIX",
    "PATTERNS",
    "SecretPattern",
    "apply_patterns",
    "fold_case",
    "mask",
]

MASK_PREFIX = "[REDACTED:"


def mask(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[REDACTED:<kind>]``."""
    return f"{MASK_PREFIX}{kind}]"


_Span = tuple[int, int, str]
# (match, original text, kind) -> (start, end, kind reported) or None to skip
_Locate = Callable[[re.Match[str], str, str], _Span | None]
# (original text, haystack, start) -> -1, or the end bound of a match locate drops
_Screen = Callable[[str, str, int], int]
# ASCII-only lower-casing, for the rare text whose str.lower() changes length.
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def fold_case(text: str) -> str:
    """``text`` lower-cased, position for position."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One shape of secret: what to look for and which part of a match to mask.

    ``locate`` receives a match, the original text and the pattern's kind and
    returns the span to mask with the kind to report, or None to leave the match
    alone. A ``fold`` pattern is written in lower case and runs over the
    lower-cased text: a case-insensitive regex cannot use the engine's fast
    literal search and was measured seven times slower. Every match starts with
    one of ``anchors`` (in the lower-cased text for a ``fold`` pattern); a shape
    without a literal lead has none. ``screen(text, hay, start)``, if given, is a
    cheap look at a start before the regex runs: -1, or a position by which any
    match from there ends that ``locate`` would drop.
    """

    kind: str
    regex: re.Pattern[str]
    locate: _Locate
    fold: bool = False
    anchors: tuple[str, ...] = ()
    screen: _Screen | None = None

    def apply(self, text: str) -> str:
        """``text`` with every secret of this shape masked."""
        return self.apply_to(text, fold_case(text) if self.fold else text)

    def apply_to(self, text: str, hay: str) -> str:
        """:meth:`apply`, given ``hay``: ``text``, or ``fold_case(text)`` for a ``fold`` shape."""
        return self._masked(text, self.regex.finditer(hay))

    def apply_at(self, text: str, hay: str, starts: Sequence[int]) -> str:
        """:meth:`apply_to`, trying the regex only at ``starts``.

        ``starts`` ascend and include every position where a match can start.
        """
        return self._masked(text, self._matches_at(text, hay, starts))

    def _matches_at(self, text: str, hay: str, starts: Sequence[int]) -> Iterator[re.Match[str]]:
        # The matches finditer would yield: it goes on from the end of each match.
        match, screen = self.regex.match, self.screen
        resume = 0
        last = len(starts) - 1
        for i, at in enumerate(starts):
            if at < resume:
                continue
            if screen is not None:
                bound = screen(text, hay, at)
                # Dropped anyway; its end matters only if the next start may lie inside.
                if bound >= 0 and (i == last or starts[i + 1] >= bound):
                    continue
            m = match(hay, at)
            if m is not None:
                resume = m.end()
                yield m

    def _masked(self, text: str, matches: Iterable[re.Match[str]]) -> str:
        pieces: list[str] = []
        last = 0
        for m in matches:
            found = self.locate(m, text, self.kind)
            if found is None:
                continue
            start, end, kind = found
            if start < last:  # inside what this pattern just masked
                continue
            pieces.append(text[last:start])
            pieces.append(mask(kind))
            last = end
        if not pieces:
            return text
        pieces.append(text[last:])
        return "".join(pieces)


def _secret_span(m: re.Match[str], text: str, kind: str) -> _Span | None:
    """The group ``secret`` if the pattern has one, else the whole match."""
    if "secret" in m.re.groupindex:
        start, end = m.span("secret")
    else:
        start, end = m.span()
    if text.startswith(MASK_PREFIX, start):
        return None
    return start, end, kind


def _checked(check: Callable[[str], bool]) -> _Locate:
    def locate(m: re.Match[str], text: str, kind: str) -> _Span | None:
        found = _secret_span(m, text, kind)
        if found is None or not check(text[found[0] : found[1]]):
            return None
        return found

    return locate


def _has_digit(token: str) -> bool:
    # Prose like "sk-this-is-a-long-hyphenated-phrase" has no digit; real keys
    # (48+ random characters) have one with overwhelming probability.
    return any(c.isdigit() for c in token)


def _discord_user_id(token: str) -> bool:
    # A Discord bot token's first part is the bot's numeric id, base64-encoded.
    head = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit()


def _vendor_locate(m: re.Match[str], text: str, kind: str) -> _Span | None:
    found = _secret_span(m, text, kind)
    if found is not None and "head" in m.re.groupindex:
        found = (m.start("head"), found[1], kind)
    return found


# -- structural shapes --------------------------------------------------------

_PRIVATE_KEY = re.compile(
    # The whole block; a block cut short (output capped mid-key) is masked up
    # to the next run of five dashes or 64 KiB, so a truncated key never shows.
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    # Greedy, not possessive: the same matches (what follows is optional), and CPython
    # before 3.11.3 got this possessive repeat wrong (multiplex/redaction/_pem.py).
    r"(?:[^-]|-(?!----)){0,65536}"
    r"(?:-----END[ A-Z0-9]{0,40}-----)?"
)

_JWT = re.compile(
    lead(("eyJ",), DASHED)
    + f"[{B64URL}]{{7,8192}}+\\.[{B64URL}]{{8,65536}}+\\.[{B64URL}]{{0,4096}}+"
)

# Lower case: the header, cookie and assignment patterns run folded.
_SCHEMES_TOKEN = "bearer|basic|token|bot|jwt|apikey"
_SCHEMES_LINE = "digest|aws4-hmac-sha256|negotiate|ntlm|sharedkey|sharedaccesssignature|hoba"

_AUTHORIZATION = re.compile(
    r"authorization[\"']?[ \t]{0,8}+[:=][ \t]{0,8}+[\"']?"
    rf"(?:(?P<scheme>{_SCHEMES_TOKEN})[ \t]{{1,8}}+(?P<token>[^\s\"'<>$,;][^\s\"'<>,;]{{0,4095}}+)"
    rf"|(?P<lscheme>{_SCHEMES_LINE})[ \t]{{1,8}}+(?P<line>[^\r\n]{{1,4096}}+)"
    r"|(?P<bare>[^\s\"'<>$][^\s\"'<>]{7,4095}+))"
)


def _authorization_locate(m: re.Match[str], text: str, kind: str) -> _Span | None:
    for group in ("token", "line", "bare"):
        if m.group(group) is not None:
            start, end = m.span(group)
            value = text[start:end]
            if value.startswith(MASK_PREFIX):
                return None
            # A scheme-less "Authorization: required" is prose, not a credential.
            if group == "bare" and not any(c.isdigit() for c in value):
                return None
            return start, end, kind
    return None


_COOKIE = re.compile(r"cookie[\"']?[ \t]{0,8}+:[ \t]{0,8}+[\"']?(?P<secret>[^\r\n\"']{1,8192}+)")

_CONNECTION = re.compile(
    # scheme://user:password@host - the scheme is implied by "://"; user and
    # host stay visible. Greedy password up to the last "@" of the authority,
    # since an unencoded "@" in a password is common.
    r"://[^\s:/@?#]{0,128}+:(?P<secret>[^\s/?#]{1,256})@"
)

# Fragments a secret-looking name contains (the precise test is
# looks_secret_name); names without one never match, so their values are not
# consumed and an assignment nested in them (a URL's query) is still found.
_FRAGMENTS = (
    "key", "token", "secret", "pass", "pwd", "cred", "auth",
    "private", "session", "cookie", "dsn", "pat", "salt", "signature",
)  # fmt: skip
_NAME_FRAGMENT = "(?:" + "|".join(_FRAGMENTS) + ")"

_ASSIGNMENT = re.compile(
    # Starts at the fragment (a literal the engine finds fast); the rest of the
    # name before it is read back by the locate function.
    rf"{_NAME_FRAGMENT}[\w.-]{{0,48}}+[\"']?[ \t]{{0,8}}+(?:=>|:=|[:=])(?!=)[ \t]{{0,8}}+"
    rf"(?:(?P<scheme>{_SCHEMES_TOKEN})[ \t]{{1,8}}+)?"
    r"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,1024}+)\"?"
    r"|'(?P<sq>[^'\r\n]{1,1024}+)'?"
    r"|(?P<bare>[^\s\"'`,;&<>|]{1,1024}+))"
)
_NAME_TAIL = re.compile(r"[\w.-]{1,48}+")

_NOT_SECRET_VALUES = frozenset(
    {
        "true", "false", "yes", "no", "on", "off", "null", "none", "nil",
        "undefined", "required", "optional", "redacted", "changeme", "example",
    }
)  # fmt: skip
_AWS_SECRET = re.compile(r"[A-Za-z0-9/+]{40}")
_AWS_SECRET_KIND = "aws-secret-key"


def _name_at(text: str, fragment: int) -> str | None:
    """The whole name around the fragment found at ``fragment``; None if too long."""
    start = fragment
    # A name character: what [\w.-] matches.
    while start > 0 and ((ch := text[start - 1]).isalnum() or ch in "_.-"):
        if fragment - start >= 48:
            return None
        start -= 1
    tail = _NAME_TAIL.match(text, fragment)
    return text[start : tail.end()] if tail is not None else None


@lru_cache(maxsize=4096)
def _name_rule(name: str) -> int:
    """0: a value assigned to ``name`` is left; 1: it is masked; 2: masked, and AWS-secret named.

    Cached: a log repeats the same few names.
    """
    # Authorization headers have their own pattern that keeps the scheme.
    if not looks_secret_name(name) or name.lower().endswith("authorization"):
        return 0
    words = name.upper()
    return 2 if "AWS" in words and "SECRET" in words else 1


def _assignment_locate(m: re.Match[str], text: str, kind: str) -> _Span | None:
    name = _name_at(text, m.start())
    rule = 0 if name is None else _name_rule(name)
    if not rule:
        return None
    group = m.lastgroup  # the value's: dq, sq or bare, the last group to close
    start, end = m.span(group)  # type: ignore[arg-type]  # never None: one always matches
    value = text[start:end]
    if (
        len(value) < 4
        or value.lower() in _NOT_SECRET_VALUES
        or value.startswith((MASK_PREFIX, "$", "%", "{", "[", "("))
        or len(set(value)) == 1  # "****", "xxxx": already masked or a placeholder
        or (group == "bare" and value.endswith(")") and "(" in value)  # code: f(x)
    ):
        return None
    if rule == 2 and _AWS_SECRET.fullmatch(value):
        kind = _AWS_SECRET_KIND
    return start, end, kind


def _assignment_screen(text: str, hay: str, start: int) -> int:
    name = _name_at(text, start)
    if name is not None and _name_rule(name):
        return -1
    end = hay.find("\n", start)  # the shape never spans a line
    return len(hay) if end < 0 else end


def _build() -> tuple[SecretPattern, ...]:
    checks: dict[str, Callable[[str], bool]] = {
        "openai-key": _has_digit,
        "discord-bot-token": _discord_user_id,
    }
    vendor = [
        SecretPattern(
            kind,
            re.compile(source),
            _checked(checks[kind]) if kind in checks else _vendor_locate,
            anchors=anchors,
        )
        for kind, anchors, source in VENDOR
    ]
    discord = SecretPattern(
        "discord-bot-token",
        re.compile(
            # Starts with the base64 of a numeric id: M, N or O.
            lead(("M", "N", "O"), DOTTED)
            + f"[{B64URL}]{{23,27}}+\\.[{B64URL}]{{6}}\\.[{B64URL}]{{27,38}}+"
        ),
        _checked(_discord_user_id),
    )
    return (
        SecretPattern("private-key", _PRIVATE_KEY, _secret_span, anchors=("-----BEGIN",)),
        SecretPattern("jwt", _JWT, _secret_span, anchors=("eyJ",)),
        *vendor,
        discord,
        SecretPattern(
            "authorization", _AUTHORIZATION, _authorization_locate, True, ("authorization",)
        ),
        SecretPattern("cookie", _COOKIE, _secret_span, fold=True, anchors=("cookie",)),
        SecretPattern("connection-password", _CONNECTION, _secret_span, anchors=("://",)),
        SecretPattern(
            "assignment", _ASSIGNMENT, _assignment_locate, True, _FRAGMENTS, _assignment_screen
        ),
    )


PATTERNS: tuple[SecretPattern, ...] = _build()
# Every kind a mask can name: the assignment shape reports AWS secrets apart.
KINDS: frozenset[str] = frozenset(p.kind for p in PATTERNS) | {_AWS_SECRET_KIND}


def apply_patterns(text: str) -> str:
    """``text`` with every layer-2 shape masked, each regex run over the whole text.

    The reference behaviour, and the path taken without the compiled engine.
    """
    for pattern in PATTERNS:
        text = pattern.apply(text)
    return text
