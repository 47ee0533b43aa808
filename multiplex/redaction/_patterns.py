"""Layer 2 of redaction: secrets recognised by their shape (docs/redaction.md).

Vendor-prefixed token formats, ``KEY=value`` assignments with secret-looking
names, Authorization and Cookie headers, PEM private keys, JWTs and passwords in
connection strings. Patterns run one after another, most specific first, over
the text the previous one produced; a later pattern never masks inside an
earlier mask.

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
from collections.abc import Callable
from dataclasses import dataclass

from multiplex.redaction._known import looks_secret_name

__all__ = ["PATTERNS", "SecretPattern", "mask", "redact_patterns"]

_MASK_PREFIX = "[REDACTED:"


def mask(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[REDACTED:<kind>]``."""
    return f"{_MASK_PREFIX}{kind}]"


_Span = tuple[int, int, str]
# (match, original text, kind) -> (start, end, kind reported) or None to skip
_Locate = Callable[[re.Match[str], str, str], _Span | None]
# ASCII-only lower-casing, for the rare text whose str.lower() changes length.
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _fold(text: str) -> str:
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
    literal search and was measured seven times slower.
    """

    kind: str
    regex: re.Pattern[str]
    locate: _Locate
    fold: bool = False

    def apply(self, text: str) -> str:
        """``text`` with every secret of this shape masked."""
        pieces: list[str] = []
        last = 0
        for m in self.regex.finditer(_fold(text) if self.fold else text):
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
    if text.startswith(_MASK_PREFIX, start):
        return None
    return start, end, kind


def _checked(check: Callable[[str], bool]) -> _Locate:
    def locate(m: re.Match[str], text: str, kind: str) -> _Span | None:
        found = _secret_span(m, text, kind)
        if found is None or not check(text[found[0] : found[1]]):
            return None
        return found

    return locate


def _lead(lead: str, boundary: str = "A-Za-z0-9_") -> str:
    """``lead`` not preceded by a character of ``boundary`` (a word start).

    The look-behind follows the lead so the lead stays a literal prefix the
    regex engine can search for quickly.
    """
    return f"(?:{lead})(?<![{boundary}](?:{lead}))"


# -- vendor formats ---------------------------------------------------------
# (kind, regex source). A (?P<secret>...) group, where present, is the part
# masked; otherwise the whole match. Order matters: anthropic's ``sk-ant-``
# before openai's ``sk-``.
_B64URL = "A-Za-z0-9_-"
_VENDOR: tuple[tuple[str, str], ...] = (
    (
        "aws-access-key",
        _lead("AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA", "A-Za-z0-9")
        + "[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    ("github-token", _lead("gh[pousr]_") + "[A-Za-z0-9]{36,255}+"),
    ("github-token", _lead("github_pat_") + "[A-Za-z0-9_]{22,255}+"),
    (
        "gitlab-token",
        _lead("gl", "A-Za-z0-9_-") + "(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,255}+",
    ),
    ("slack-token", _lead("xox", "A-Za-z0-9_-") + "[abposr]-[A-Za-z0-9-]{10,255}+"),
    ("slack-token", _lead("xapp-", "A-Za-z0-9_-") + "[0-9]-[A-Za-z0-9-]{10,255}+"),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/(?P<secret>(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,255}+)",
    ),
    ("stripe-key", _lead("sk_|rk_|pk_") + "(?:live|test)_[A-Za-z0-9]{10,247}+"),
    ("stripe-key", _lead("whsec_") + "[A-Za-z0-9]{24,64}+"),
    ("anthropic-key", _lead("sk-ant-", "A-Za-z0-9_-") + f"[{_B64URL}]{{20,255}}+"),
    (
        "openai-key",
        _lead("sk-", "A-Za-z0-9_-") + f"(?:proj-|svcacct-|admin-)?[{_B64URL}]{{20,255}}+",
    ),
    ("google-api-key", _lead("AIza", "A-Za-z0-9_-") + f"[{_B64URL}]{{35}}(?![{_B64URL}])"),
    ("google-oauth-token", _lead(r"ya29\.", "A-Za-z0-9_-") + f"[{_B64URL}]{{20,2048}}+"),
    ("google-client-secret", _lead("GOCSPX-", "A-Za-z0-9_-") + f"[{_B64URL}]{{24,40}}+"),
    ("npm-token", _lead("npm_") + "[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("pypi-token", _lead("pypi-", "A-Za-z0-9_-") + f"AgE[{_B64URL}]{{50,2048}}+"),
    ("twilio-key", _lead("SK", "A-Za-z0-9") + "[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    ("twilio-account-sid", _lead("AC", "A-Za-z0-9") + "[0-9a-f]{32}(?![A-Za-z0-9])"),
    (
        "sendgrid-key",
        _lead(r"SG\.", "A-Za-z0-9_-") + f"[{_B64URL}]{{22}}\\.[{_B64URL}]{{43}}(?![{_B64URL}])",
    ),
    ("mailgun-key", _lead("key-", "A-Za-z0-9_-") + "[0-9a-f]{32}(?![A-Za-z0-9])"),
    ("huggingface-token", _lead("hf_") + "[A-Za-z0-9]{30,64}+"),
    ("huggingface-token", _lead("api_org_") + "[A-Za-z0-9]{30,64}+"),
    (
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/"
        r"(?P<secret>[0-9]{17,20}/[A-Za-z0-9_-]{60,68}+)",
    ),
    ("telegram-bot-token", f":(?P<secret>AA(?<=[0-9]{{8}}:AA)[{_B64URL}]{{33}})(?![{_B64URL}])"),
    ("digitalocean-token", _lead("do[por]_v1_") + "[a-f0-9]{64}(?![A-Za-z0-9])"),
    ("shopify-token", _lead("shp(?:at|ca|pa|ss)_") + "[a-fA-F0-9]{32}+"),
    ("azure-storage-key", r"(?:Account|SharedAccess)Key=(?P<secret>[A-Za-z0-9+/]{20,255}+={0,2})"),
    ("square-token", _lead("sq0", "A-Za-z0-9_-") + "(?:atp|csp)-[A-Za-z0-9_-]{22,60}+"),
    ("atlassian-token", _lead("AT", "A-Za-z0-9_-") + "(?:ATT|CTT)3[A-Za-z0-9_=-]{50,400}+"),
    ("heroku-key", _lead("HRKU-", "A-Za-z0-9_-") + "[A-Za-z0-9_-]{20,128}+"),
    ("databricks-token", _lead("dapi", "A-Za-z0-9_-") + "[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])"),
    ("linear-key", _lead("lin_") + "(?:api|oauth)_[A-Za-z0-9]{40}+"),
    (
        "doppler-token",
        _lead(r"dp\.", "A-Za-z0-9_.-") + r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}+",
    ),
    ("vault-token", _lead(r"hv[sbr]\.", "A-Za-z0-9_.-") + f"[{_B64URL}]{{24,255}}+"),
    ("age-secret-key", "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("postman-key", _lead("PMAK-", "A-Za-z0-9_-") + "[a-f0-9]{24}-[a-f0-9]{34}"),
    ("grafana-token", _lead("glsa_") + "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("grafana-token", _lead("glc_") + "[A-Za-z0-9+/]{32,400}+={0,2}"),
    ("sentry-token", _lead("sntry[su]_") + "[A-Za-z0-9+/=_-]{40,400}+"),
    ("supabase-token", _lead("sbp_") + "[a-f0-9]{40}(?![A-Za-z0-9])"),
    ("groq-key", _lead("gsk_") + "[A-Za-z0-9]{48,64}+"),
    ("xai-key", _lead("xai-", "A-Za-z0-9_-") + "[A-Za-z0-9]{70,90}+"),
    ("replicate-token", _lead("r8_") + "[A-Za-z0-9]{37}(?![A-Za-z0-9])"),
    ("notion-token", _lead("ntn_") + "[A-Za-z0-9]{43,46}(?![A-Za-z0-9])"),
    ("notion-token", _lead("secret_") + "[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    (
        "terraform-token",
        r"\.atlasv1\.(?<=(?<![A-Za-z0-9])(?P<head>[A-Za-z0-9]{14})\.atlasv1\.)"
        r"[A-Za-z0-9_=-]{60,90}+",
    ),
)


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
    r"(?:[^-]|-(?!----)){0,65536}+"
    r"(?:-----END[ A-Z0-9]{0,40}-----)?"
)

_JWT = re.compile(
    _lead("eyJ", "A-Za-z0-9_-")
    + f"[{_B64URL}]{{7,8192}}+\\.[{_B64URL}]{{8,65536}}+\\.[{_B64URL}]{{0,4096}}+"
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
            if value.startswith(_MASK_PREFIX):
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
_NAME_FRAGMENT = (
    "(?:key|token|secret|pass|pwd|cred|auth|private|session|cookie|dsn|pat|salt|signature)"
)

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


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_.-"


def _name_at(text: str, fragment: int) -> str | None:
    """The whole name around the fragment found at ``fragment``; None if too long."""
    start = fragment
    while start > 0 and _is_name_char(text[start - 1]):
        if fragment - start >= 48:
            return None
        start -= 1
    tail = _NAME_TAIL.match(text, fragment)
    return text[start : tail.end()] if tail is not None else None


def _assignment_locate(m: re.Match[str], text: str, kind: str) -> _Span | None:
    name = _name_at(text, m.start())
    if name is None or not looks_secret_name(name):
        return None
    # Authorization headers have their own pattern that keeps the scheme.
    if name.lower().endswith("authorization"):
        return None
    group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
    start, end = m.span(group)
    value = text[start:end]
    if (
        len(value) < 4
        or value.lower() in _NOT_SECRET_VALUES
        or value.startswith((_MASK_PREFIX, "$", "%", "{", "[", "("))
        or len(set(value)) == 1  # "****", "xxxx": already masked or a placeholder
        or (group == "bare" and value.endswith(")") and "(" in value)  # code: f(x)
    ):
        return None
    words = name.upper()
    if "AWS" in words and "SECRET" in words and _AWS_SECRET.fullmatch(value):
        kind = "aws-secret-key"
    return start, end, kind


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
        )
        for kind, source in _VENDOR
    ]
    discord = SecretPattern(
        "discord-bot-token",
        re.compile(
            # Starts with the base64 of a numeric id: M, N or O.
            _lead("[MNO]", "A-Za-z0-9_.-")
            + f"[{_B64URL}]{{23,27}}+\\.[{_B64URL}]{{6}}\\.[{_B64URL}]{{27,38}}+"
        ),
        _checked(_discord_user_id),
    )
    return (
        SecretPattern("private-key", _PRIVATE_KEY, _secret_span),
        SecretPattern("jwt", _JWT, _secret_span),
        *vendor,
        discord,
        SecretPattern("authorization", _AUTHORIZATION, _authorization_locate, fold=True),
        SecretPattern("cookie", _COOKIE, _secret_span, fold=True),
        SecretPattern("connection-password", _CONNECTION, _secret_span),
        SecretPattern("assignment", _ASSIGNMENT, _assignment_locate, fold=True),
    )


PATTERNS: tuple[SecretPattern, ...] = _build()


def redact_patterns(text: str) -> str:
    """``text`` with every layer-2 secret shape masked as ``[REDACTED:<kind>]``."""
    for pattern in PATTERNS:
        text = pattern.apply(text)
    return text
