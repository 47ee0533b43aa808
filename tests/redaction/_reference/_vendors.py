"""The vendor token formats of layer 2: what each starts with and the rest of its shape.

Split from :mod:`._patterns` (which turns them into :class:`SecretPattern` s) so
the table reads as one list. Every format starts with a literal lead; the leads
double as the anchors the engine looks for (``docs/redaction.md``, "Engine").
"""

from __future__ import annotations

import re

__all__ = ["B64URL", "DASHED", "DOTTED", "VENDOR", "lead"]


def lead(leads: tuple[str, ...], boundary: str = "A-Za-z0-9_") -> str:
    """One of ``leads`` (literals of one length) not preceded by a character of ``boundary``.

    The look-behind follows the lead so the lead stays a literal prefix the
    regex engine can search for quickly.
    """
    either = "|".join(map(re.escape, leads))
    return f"(?:{either})(?<![{boundary}](?:{either}))"


_Vendor = tuple[str, tuple[str, ...], str]


def _led(
    kind: str,
    leads: tuple[str, ...],
    rest: str,
    boundary: str = "A-Za-z0-9_",
    anchors: tuple[str, ...] | None = None,
) -> _Vendor:
    """A vendor format that starts with one of ``leads`` at a word start.

    The leads are its anchors unless ``anchors`` names longer ones that every
    match starts with (``AC`` is common in text; ``AC`` and a hex digit less so).
    """
    return kind, anchors or leads, lead(leads, boundary) + rest


def _then(heads: tuple[str, ...], tails: str | tuple[str, ...], end: str = "") -> tuple[str, ...]:
    return tuple(h + t + end for h in heads for t in tails)


# -- vendor formats ---------------------------------------------------------
# (kind, anchors, regex source): every match starts with one of the anchors. A
# (?P<secret>...) group, where present, is the part masked; otherwise the whole
# match. Order matters: anthropic's ``sk-ant-`` before openai's ``sk-``.
B64URL = "A-Za-z0-9_-"
DASHED = "A-Za-z0-9_-"  # the boundary of tokens whose alphabet has a dash
DOTTED = "A-Za-z0-9_.-"  # ... and a dot
_AWS = (
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AGPA",
    "AIDA",
    "AIPA",
    "ANPA",
    "ANVA",
    "APKA",
    "AROA",
    "ASCA",
)
_DISCORD_HOOKS = tuple(
    f"https://{sub}discord{app}.com/api/webhooks/"
    for sub in ("", "ptb.", "canary.")
    for app in ("", "app")
)
VENDOR: tuple[_Vendor, ...] = (
    _led("aws-access-key", _AWS, "[A-Z0-9]{16}(?![A-Za-z0-9])", "A-Za-z0-9"),
    _led("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "[A-Za-z0-9]{36,255}+"),
    _led("github-token", ("github_pat_",), "[A-Za-z0-9_]{22,255}+"),
    _led(
        "gitlab-token",
        ("gl",),
        "(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,255}+",
        DASHED,
        _then(("gl",), ("pat", "dt", "rt", "ptt", "ft", "soat", "cbt"), "-"),
    ),
    _led(
        "slack-token",
        ("xox",),
        "[abposr]-[A-Za-z0-9-]{10,255}+",
        DASHED,
        _then(("xox",), "abposr", "-"),
    ),
    _led("slack-token", ("xapp-",), "[0-9]-[A-Za-z0-9-]{10,255}+", DASHED),
    (
        "slack-webhook",
        ("https://hooks.slack.com/",),
        r"https://hooks\.slack\.com/(?P<secret>(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,255}+)",
    ),
    _led(
        "stripe-key",
        ("sk_", "rk_", "pk_"),
        "(?:live|test)_[A-Za-z0-9]{10,247}+",
        anchors=_then(("sk_", "rk_", "pk_"), ("live", "test"), "_"),
    ),
    _led("stripe-key", ("whsec_",), "[A-Za-z0-9]{24,64}+"),
    _led("anthropic-key", ("sk-ant-",), f"[{B64URL}]{{20,255}}+", DASHED),
    _led("openai-key", ("sk-",), f"(?:proj-|svcacct-|admin-)?[{B64URL}]{{20,255}}+", DASHED),
    _led("google-api-key", ("AIza",), f"[{B64URL}]{{35}}(?![{B64URL}])", DASHED),
    _led("google-oauth-token", ("ya29.",), f"[{B64URL}]{{20,2048}}+", DASHED),
    _led("google-client-secret", ("GOCSPX-",), f"[{B64URL}]{{24,40}}+", DASHED),
    _led("npm-token", ("npm_",), "[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    _led("pypi-token", ("pypi-",), f"AgE[{B64URL}]{{50,2048}}+", DASHED, ("pypi-AgE",)),
    _led(
        "twilio-key",
        ("SK",),
        "[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        "A-Za-z0-9",
        _then(("SK",), "0123456789abcdefABCDEF"),
    ),
    _led(
        "twilio-account-sid",
        ("AC",),
        "[0-9a-f]{32}(?![A-Za-z0-9])",
        "A-Za-z0-9",
        _then(("AC",), "0123456789abcdef"),
    ),
    _led("sendgrid-key", ("SG.",), f"[{B64URL}]{{22}}\\.[{B64URL}]{{43}}(?![{B64URL}])", DASHED),
    _led("mailgun-key", ("key-",), "[0-9a-f]{32}(?![A-Za-z0-9])", DASHED),
    _led("huggingface-token", ("hf_",), "[A-Za-z0-9]{30,64}+"),
    _led("huggingface-token", ("api_org_",), "[A-Za-z0-9]{30,64}+"),
    (
        "discord-webhook",
        _DISCORD_HOOKS,
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/"
        r"(?P<secret>[0-9]{17,20}/[A-Za-z0-9_-]{60,68}+)",
    ),
    (
        "telegram-bot-token",
        (":AA",),
        f":(?P<secret>AA(?<=[0-9]{{8}}:AA)[{B64URL}]{{33}})(?![{B64URL}])",
    ),
    _led("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), "[a-f0-9]{64}(?![A-Za-z0-9])"),
    _led("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), "[a-fA-F0-9]{32}+"),
    (
        "azure-storage-key",
        ("AccountKey=", "SharedAccessKey="),
        r"(?:Account|SharedAccess)Key=(?P<secret>[A-Za-z0-9+/]{20,255}+={0,2})",
    ),
    _led(
        "square-token",
        ("sq0",),
        "(?:atp|csp)-[A-Za-z0-9_-]{22,60}+",
        DASHED,
        ("sq0atp-", "sq0csp-"),
    ),
    _led(
        "atlassian-token",
        ("AT",),
        "(?:ATT|CTT)3[A-Za-z0-9_=-]{50,400}+",
        DASHED,
        ("ATATT3", "ATCTT3"),
    ),
    _led("heroku-key", ("HRKU-",), "[A-Za-z0-9_-]{20,128}+", DASHED),
    _led("databricks-token", ("dapi",), "[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])", DASHED),
    _led(
        "linear-key",
        ("lin_",),
        "(?:api|oauth)_[A-Za-z0-9]{40}+",
        anchors=("lin_api_", "lin_oauth_"),
    ),
    _led("doppler-token", ("dp.",), r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}+", DOTTED),
    _led("vault-token", ("hvs.", "hvb.", "hvr."), f"[{B64URL}]{{24,255}}+", DOTTED),
    (
        "age-secret-key",
        ("AGE-SECRET-KEY-1",),
        "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    _led("postman-key", ("PMAK-",), "[a-f0-9]{24}-[a-f0-9]{34}", DASHED),
    _led("grafana-token", ("glsa_",), "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    _led("grafana-token", ("glc_",), "[A-Za-z0-9+/]{32,400}+={0,2}"),
    _led("sentry-token", ("sntrys_", "sntryu_"), "[A-Za-z0-9+/=_-]{40,400}+"),
    _led("supabase-token", ("sbp_",), "[a-f0-9]{40}(?![A-Za-z0-9])"),
    _led("groq-key", ("gsk_",), "[A-Za-z0-9]{48,64}+"),
    _led("xai-key", ("xai-",), "[A-Za-z0-9]{70,90}+", DASHED),
    _led("replicate-token", ("r8_",), "[A-Za-z0-9]{37}(?![A-Za-z0-9])"),
    _led("notion-token", ("ntn_",), "[A-Za-z0-9]{43,46}(?![A-Za-z0-9])"),
    _led("notion-token", ("secret_",), "[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    (
        "terraform-token",
        (".atlasv1.",),
        r"\.atlasv1\.(?<=(?<![A-Za-z0-9])(?P<head>[A-Za-z0-9]{14})\.atlasv1\.)"
        r"[A-Za-z0-9_=-]{60,90}+",
    ),
)
