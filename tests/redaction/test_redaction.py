"""Secret redaction (docs/redaction.md): what is masked, what is not, the switch, linear time."""

from __future__ import annotations

import base64
import json
import random
import string
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multiplex.redaction as redaction
from multiplex.redaction import (
    KnownValues,
    Redactor,
    encoded_forms,
    looks_secret_name,
    redact_always,
    redact_patterns,
)

_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_B64URL = _ALNUM + "_-"


def fake(alphabet: str, n: int, seed: int) -> str:
    """A deterministic random string: fake credentials that look real."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_JWT = ".".join(
    (
        _b64url(b'{"alg":"HS256","typ":"JWT"}'),
        _b64url(b'{"sub":"1234567890","name":"Alice","iat":1516239022}'),
        fake(_B64URL, 43, 1),
    )
)
_PEM_BODY = "\n".join(fake(_ALNUM + "+/", 64, 10 + i) for i in range(5))
_DISCORD = (
    base64.b64encode(b"123456789012345678").decode() + "." + fake(_B64URL, 6, 2) + "."
    "" + fake(_B64URL, 27, 3)
)


def _pem(label: str) -> str:
    return f"-----BEGIN {label}-----\n{_PEM_BODY}\n-----END {label}-----"


# (id, text containing the secret, the secret, expected kind, text that must stay visible)
SECRETS: list[tuple[str, str, str, str, str]] = []


def _case(cid: str, template: str, secret: str, kind: str, keep: str = "") -> None:
    SECRETS.append((cid, template.format(s=secret), secret, kind, keep))


_case("aws-akia", "using key {s} for s3", "AKIA" + fake(_UPPER, 16, 4), "aws-access-key")
_case("aws-asia", "creds: {s}", "ASIA" + fake(_UPPER, 16, 5), "aws-access-key")
_case(
    "aws-secret",
    "AWS_SECRET_ACCESS_KEY={s}",
    fake(_ALNUM + "/+", 40, 6),
    "aws-secret-key",
    "AWS_SECRET_ACCESS_KEY=",
)
for i, prefix in enumerate(("ghp_", "gho_", "ghu_", "ghs_", "ghr_")):
    _case(
        f"github-{prefix}", "remote uses {s} now", prefix + fake(_ALNUM, 36, 20 + i), "github-token"
    )
_case("github-pat", "GH={s}", "github_pat_" + fake(_ALNUM + "_", 82, 7), "github-token")
_case("gitlab", "token {s}", "glpat-" + fake(_B64URL, 20, 8), "gitlab-token")
_case(
    "slack-bot", "{s}", "xoxb-" + "-".join(fake(_ALNUM, 12, 9 + i) for i in range(3)), "slack-token"
)
_case("slack-user", "slack {s}", "xoxp-" + fake(_ALNUM, 40, 11), "slack-token")
_case(
    "slack-webhook",
    "POST https://hooks.slack.com/{s}",
    "services/T0000/B0000/" + fake(_ALNUM, 24, 12),
    "slack-webhook",
    "https://hooks.slack.com/",
)
_case("stripe-sk", "stripe {s}", "sk_live_" + fake(_ALNUM, 24, 13), "stripe-key")
_case("stripe-rk", "stripe {s}", "rk_live_" + fake(_ALNUM, 24, 14), "stripe-key")
_case("stripe-pk", "stripe {s}", "pk_live_" + fake(_ALNUM, 24, 15), "stripe-key")
_case("openai", "key {s}", "sk-" + fake(_ALNUM, 48, 16), "openai-key")
_case("openai-proj", "key {s}", "sk-proj-" + fake(_B64URL, 120, 17), "openai-key")
_case("anthropic", "key {s}", "sk-ant-api03-" + fake(_B64URL, 93, 18), "anthropic-key")
_case("google-api", "maps {s}", "AIza" + fake(_B64URL, 35, 19), "google-api-key")
_case("google-oauth", "oauth {s}", "ya29." + fake(_B64URL, 100, 30), "google-oauth-token")
_case("npm", "//registry.npmjs.org/:_authToken={s}", "npm_" + fake(_ALNUM, 36, 31), "npm-token")
_case("pypi", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + fake(_B64URL, 120, 32), "pypi-token")
_case("twilio-sk", "twilio {s}", "SK" + fake(_HEX, 32, 33), "twilio-key")
_case("twilio-ac", "account {s}", "AC" + fake(_HEX, 32, 34), "twilio-account-sid")
_case(
    "sendgrid",
    "{s}",
    "SG." + fake(_B64URL, 22, 35) + "." + fake(_B64URL, 43, 36),
    "sendgrid-key",
)
_case("mailgun", "mailgun {s}", "key-" + fake(_HEX, 32, 37), "mailgun-key")
_case("huggingface", "hf {s}", "hf_" + fake(_ALNUM, 34, 38), "huggingface-token")
_case("discord-bot", "bot token {s}", _DISCORD, "discord-bot-token")
_case(
    "telegram-bot",
    "https://api.telegram.org/bot123456789:{s}/getMe",
    "AA" + fake(_B64URL, 33, 39),
    "telegram-bot-token",
    "bot123456789:",
)
_case("digitalocean", "do {s}", "dop_v1_" + fake(_HEX, 64, 40), "digitalocean-token")
_case("shopify", "shop {s}", "shpat_" + fake(_HEX, 32, 41), "shopify-token")
_case(
    "azure-storage",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core",
    fake(_ALNUM + "+/", 86, 42) + "==",
    "azure-storage-key",
    "AccountName=acct;AccountKey=",
)
_case("square", "sq {s}", "sq0atp-" + fake(_B64URL, 22, 43), "square-token")
_case("atlassian", "jira {s}", "ATATT3" + fake(_B64URL, 180, 44), "atlassian-token")
_case("heroku", "heroku {s}", "HRKU-AA" + fake(_B64URL, 58, 45), "heroku-key")
_case("databricks", "dbx {s}", "dapi" + fake(_HEX, 32, 46), "databricks-token")
_case("linear", "linear {s}", "lin_api_" + fake(_ALNUM, 40, 47), "linear-key")
_case("doppler", "doppler {s}", "dp.pt." + fake(_ALNUM, 43, 48), "doppler-token")
_case("vault", "VAULT {s}", "hvs." + fake(_B64URL, 90, 49), "vault-token")
# assignments: the name stays visible
_case("env", "API_KEY={s}", fake(_ALNUM, 20, 50), "assignment", "API_KEY=")
_case("export", "export DB_PASSWORD='{s}'", "pa ss;w0rd", "assignment", "export DB_PASSWORD='")
_case("json", '{{"client_secret": "{s}", "id": 3}}', 'a\\"b' + fake(_ALNUM, 12, 51), "assignment")
_case("yaml", "db:\n  password: {s}\n  host: x", fake(_ALNUM, 12, 52), "assignment", "password: ")
_case("camel", "apiKey: {s}", fake(_ALNUM, 16, 53), "assignment", "apiKey: ")
_case("flag", "cli --token={s} --verbose", fake(_ALNUM, 16, 54), "assignment", "--token=")
_case("query", "GET /cb?access_token={s}&state=1", fake(_ALNUM, 30, 55), "assignment", "&state=1")
_case("header", "X-Api-Key: {s}", fake(_ALNUM, 32, 56), "assignment", "X-Api-Key: ")
_case("python", "connect(password={s}, host=h)", fake(_ALNUM, 10, 57), "assignment")
# headers
_case(
    "bearer",
    "curl -H 'Authorization: Bearer {s}' https://x",
    fake(_ALNUM, 32, 58),
    "authorization",
    "Authorization: Bearer ",
)
_case(
    "basic",
    "authorization: Basic {s}",
    base64.b64encode(b"alice:hunter2").decode(),
    "authorization",
    "authorization: Basic ",
)
_case("token-scheme", "Authorization: token {s}", fake(_HEX, 40, 59), "authorization")
_case(
    "proxy-digest",
    "Proxy-Authorization: Digest {s}",
    'username="bob", response="' + fake(_HEX, 32, 60) + '"',
    "authorization",
)
_case("cookie", "Cookie: {s}", "sid=" + fake(_ALNUM, 24, 61) + "; theme=dark", "cookie", "Cookie: ")
# PEM private keys: the whole block
for label in (
    "RSA PRIVATE KEY",
    "EC PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "PGP PRIVATE KEY BLOCK",
):
    _case(f"pem-{label}", "key:\n{s}\ndone", _pem(label), "private-key", "done")
_case("pem-truncated", "{s}", "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY, "private-key")
_case("jwt", "id_token={s}", _JWT, "jwt", "id_token=")
_case("jwt-bearer", "Authorization: Bearer {s}", _JWT, "jwt", "Authorization: Bearer ")
# connection strings: the user and host stay visible
_case(
    "postgres",
    "postgres://app:{s}@db.internal:5432/prod",
    fake(_ALNUM, 16, 62),
    "connection-password",
    "postgres://app:",
)
_case(
    "mongodb-srv",
    "mongodb+srv://admin:{s}@cluster0.example.net/x",
    "p@ss" + fake(_ALNUM, 8, 63),
    "connection-password",
    "@cluster0.example.net/x",
)
_case("redis-no-user", "redis://:{s}@cache:6379/0", fake(_ALNUM, 20, 64), "connection-password")


@pytest.mark.parametrize(
    ("text", "secret", "kind", "keep"), [c[1:] for c in SECRETS], ids=[c[0] for c in SECRETS]
)
def test_layer2_masks_secret(text: str, secret: str, kind: str, keep: str) -> None:
    out = redact_patterns(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert keep in out


def test_secret_table_is_large_enough() -> None:
    kinds = {c[3] for c in SECRETS}
    assert len(SECRETS) >= 40
    vendor = kinds - {
        "assignment",
        "authorization",
        "cookie",
        "private-key",
        "jwt",
        "connection-password",
    }
    assert len(vendor) >= 25


LOOK_ALIKES = [
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 merged",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "a risk-free migration with disk-backed queues",
    "we use sk-learn and ask-me-anything-style sessions",
    "PATH=/usr/bin:/bin:/usr/local/bin",
    "password_hint=true",
    "remember_password=false api_key=None token: null",
    "aGVsbG8gd29ybGQgdGhpcyBpcyBmaW5l",
    "XAKIAIOSFODNN7EXAMPLE and AKIAIOSFODNN7EXAMPLEXYZ",
    "release v1.2.3-rc.1 built with python-3.11.7",
    "clone https://alice@example.com/repo.git or https://example.com:8443/path",
    "Authorization failed for user bob; authorization: required",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----",
    "KEYBOARD_LAYOUT=us-international",
    "TOKENIZERS_PARALLELISM=false",
    "GIT_AUTHOR_NAME=Alice",
    'api_key=$API_KEY password: "${DB_PASSWORD}"',
    "token_count=12345 SSH_KEY_PATH=/home/alice/.ssh/id_ed25519",
    "if token == expected: return",
    "mail alice@example.com, push git@github.com:org/repo.git",
    "header eyJhbGciOiJIUzI1NiJ9 alone is not a token",
    "at 2024-05-01T12:00:00Z status=200",
    "password: ******** (already masked)",
    "ghp_short and glpat-tiny",
    "monkey=bananas PWD=/home/alice",
    "session = requests.Session()",
    "the secret sauce is love",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_layer2_leaves_look_alike(text: str) -> None:
    assert redact_patterns(text) == text


def test_look_alike_table_is_large_enough() -> None:
    assert len(LOOK_ALIKES) >= 20


# -- names -------------------------------------------------------------------

SECRET_NAMES = [
    "API_KEY", "OPENAI_API_KEY", "apiKey", "x-api-key", "GITHUB_TOKEN", "CLIENT_SECRET",
    "DB_PASSWORD", "MYSQL_PASSWD", "SMTP_PASS", "DBPASS", "AWS_SESSION_TOKEN", "SESSION_ID",
    "GOOGLE_CREDENTIALS", "BASIC_AUTH", "OAUTH", "PRIVATE_KEY", "COOKIE_SECRET", "SENTRY_DSN",
    "GITHUB_PAT", "DB_PWD", "ACCESSTOKEN", "secret", "Authorization", "JWT_SIGNING_KEY",
]  # fmt: skip
PLAIN_NAMES = [
    "PATH", "HOME", "LANG", "PWD", "OLDPWD", "KEYBOARD_LAYOUT", "TOKENIZERS_PARALLELISM",
    "GIT_AUTHOR_NAME", "MONKEY", "HTTP_PROXY_BYPASS", "SSH_KEY_PATH", "PASSWORD_HINT",
    "TOKEN_URL", "SESSION_TIMEOUT", "GOOGLE_APPLICATION_CREDENTIALS_FILE", "KEYMAP", "TERM",
    "USER", "AUTH_ENABLED", "SECRETARY", "",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name: str) -> None:
    assert looks_secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plain_names(name: str) -> None:
    assert not looks_secret_name(name)


# -- layer 1 -----------------------------------------------------------------

_VALUE = "s3cr3t-Value!/+?&"


def test_encoded_forms_raw_first_and_complete() -> None:
    forms = encoded_forms(_VALUE)
    raw = _VALUE.encode()
    assert forms[0] == _VALUE
    assert len(forms) == len(set(forms))
    for expected in (
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        quote(_VALUE),
        quote_plus(_VALUE),
    ):
        assert expected in forms


@pytest.mark.parametrize(
    "form",
    [
        _VALUE,
        base64.b64encode(_VALUE.encode()).decode(),
        base64.urlsafe_b64encode(_VALUE.encode()).decode().rstrip("="),
        quote(_VALUE, safe=""),
        quote_plus(_VALUE),
        base64.b64encode(b"alice:" + _VALUE.encode()).decode(),  # inside Basic auth
    ],
    ids=["raw", "base64", "urlsafe-base64", "quote", "quote_plus", "embedded-base64"],
)
def test_known_value_forms_masked(form: str) -> None:
    known = KnownValues([_VALUE])
    out = known.redact(f"out: {form} end")
    assert "[REDACTED:known]" in out
    assert _VALUE not in out
    for f in encoded_forms(_VALUE):
        assert f not in out
    assert out.startswith("out: ") and out.endswith(" end")


def test_known_value_json_escaped() -> None:
    value = 'say "hi"\\now'
    known = KnownValues([value])
    assert known.redact(json.dumps({"v": value})) == '{"v": "[REDACTED:known]"}'


def test_known_longest_match_wins() -> None:
    known = KnownValues(["abcdef12", "abcdef1234"])
    assert known.redact("x abcdef1234 y abcdef12 z") == "x [REDACTED:known] y [REDACTED:known] z"


def test_known_short_values_ignored() -> None:
    short = "a" * (KnownValues.MIN_LENGTH - 1)
    known = KnownValues([short, "", "hello"])
    assert not known and len(known) == 0
    assert known.redact(f"{short} hello") == f"{short} hello"
    assert KnownValues.MIN_LENGTH == 6


def test_known_union_contains_len_repr() -> None:
    a, b = KnownValues(["alpha-secret-1"]), KnownValues(["beta-secret-22"])
    both = a.union(b)
    assert len(both) == 2 and both
    assert "x alpha-secret-1" in both and "beta-secret-22!" in both
    assert "alpha-secret-1" not in b
    assert "nothing here" not in both
    assert "alpha" not in repr(both)
    assert both == KnownValues(["beta-secret-22", "alpha-secret-1"])


def test_known_nested_prefixes_fall_back_to_flat_and_stay_longest() -> None:
    values = ["q" * n for n in range(6, 260)]
    known = KnownValues(values)
    assert known.redact("<" + "q" * 259 + ">") == "<[REDACTED:known]>"


def test_known_whole_credential_file_and_stripped() -> None:
    content = "-----BEGIN KEYFILE-----\nline-one-data\nline-two-data\n"
    known = KnownValues([content])
    assert known.redact("cat: " + content.strip() + " end") == "cat: [REDACTED:known] end"


# -- the switch (docs/redaction.md) ---------------------------------------------------

_OWN = "own-secret-value-1"
_OTHER = "other-profile-secret-2"
_PATTERN_ONLY = "ghp_" + fake(_ALNUM, 36, 99)
_MIXED = f"{_OWN} | {_OTHER} | {_PATTERN_ONLY}"


def test_switch_off_keeps_known_values_but_skips_layer2() -> None:
    red = Redactor(KnownValues([_OWN]), layer2=False, others=KnownValues([_OTHER]))
    assert not red.layer2
    out = red.redact(_MIXED)
    assert _OWN not in out and _OTHER not in out
    assert _PATTERN_ONLY in out


def test_switch_on_masks_layer2() -> None:
    red = Redactor(KnownValues([_OWN]), others=KnownValues([_OTHER]))
    assert red.layer2
    out = red.redact(_MIXED)
    assert out == "[REDACTED:known] | [REDACTED:known] | [REDACTED:github-token]"


@pytest.mark.parametrize("layer2", [True, False])
def test_other_profiles_value_masked_whatever_the_switch(layer2: bool) -> None:
    red = Redactor(KnownValues(), layer2=layer2, others=KnownValues([_OTHER]))
    encoded = base64.b64encode(_OTHER.encode()).decode()
    out = red.redact(f"leak {_OTHER} and {encoded}")
    assert out == "leak [REDACTED:known] and [REDACTED:known]"


def test_redact_always_ignores_switch() -> None:
    out = redact_always(_MIXED + " password=hunter22", KnownValues([_OWN, _OTHER]))
    assert out == (
        "[REDACTED:known] | [REDACTED:known] | [REDACTED:github-token] "
        "password=[REDACTED:assignment]"
    )


def test_public_names() -> None:
    assert redaction.__all__ == sorted(redaction.__all__)
    assert set(redaction.__all__) == {
        "KnownValues", "Redactor", "encoded_forms", "looks_secret_name",
        "redact_always", "redact_command", "redact_patterns",
    }  # fmt: skip


# -- properties ----------------------------------------------------------------

_PIECES = [
    "API_KEY=", "password: ", "Authorization: Bearer ", "postgres://u:", "@h/db", " ", "\n",
    "ghp_", "sk-", "eyJ", ".", "=", ":", "'", '"', "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "abc", "XYZ123", _PATTERN_ONLY, "Cookie: ", "&", "?",
]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=30).map("".join))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_always(text, KnownValues([_OWN]))
    assert redact_always(once, KnownValues([_OWN])) == once


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40), st.booleans())
def test_known_value_never_survives(before: str, after: str, layer2: bool) -> None:
    red = Redactor(KnownValues([_OWN]), layer2=layer2)
    assert _OWN not in red.redact(before + _OWN + after)


# -- linear time -----------------------------------------------------------------

_N = 200_000
ADVERSARIAL = {
    "a-run": "a" * _N,
    "equals": "=" * _N,
    "eyJ": "eyJ" * (_N // 3),
    "colon-at": ":@" * (_N // 2),
    "begin-no-end": "-----BEGIN RSA PRIVATE KEY-----\n" * (_N // 32),
    "dashes": "-" * _N,
    "key-equals": "key=" * (_N // 4),
    "scheme": "a://b:" * (_N // 6),
    "sk-dash": "sk-a1-" * (_N // 6),
    "digits-colon": "1234567890:AA" * (_N // 13),
    "quotes": 'password="' + "\\" * _N,
    "names": ("x" * 47 + "key") * (_N // 50),
    "authorization": "Authorization: " * (_N // 15),
    "mixed": ("eyJ" + "a" * 50 + "." + "b" * 50 + ".") * (_N // 105),
}


@pytest.mark.slow
@pytest.mark.timeout(20)
@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_inputs_complete(text: str) -> None:
    red = Redactor(KnownValues(["a" * 40, "key=key=", _OWN]), others=KnownValues([_OTHER]))
    out = red.redact(text)
    assert isinstance(out, str)
    assert redact_always(text, KnownValues([_OWN])) is not None


def test_truncated_private_key_masked_to_the_end() -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 5000
    assert redact_patterns(text) == "[REDACTED:private-key]"
