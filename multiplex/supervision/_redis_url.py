"""Redis URLs as ``multiplex.yaml``'s ``cluster.redis_url`` gives them (docs/cluster.md#authentication):
whether one carries credentials, and how it is shown with its password masked. A pure leaf."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

__all__ = ["masked_redis_url", "redis_url_authenticates"]


def redis_url_authenticates(url: str) -> bool:
    """Whether ``url`` gives Redis credentials (a ``unix://`` socket counts: its file mode guards it)."""
    if url.startswith("unix://"):
        return True
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return False
    return bool(password) or any(v for v in parse_qs(parts.query).get("password", []))


def masked_redis_url(url: str) -> str:
    """``url`` with the password (in the authority or a ``password=`` query) shown as ``***``."""
    try:
        parts = urlsplit(url)
        secret = parts.password
    except ValueError:
        return "<a malformed URL>"
    netloc = parts.netloc
    if secret:
        userinfo, _, host = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:***@{host}"
    query = "&".join(
        "password=***" if pair.startswith("password=") and pair != "password=" else pair
        for pair in parts.query.split("&")
    )
    shown = f"{parts.scheme}://{netloc}{parts.path}"
    return (
        shown
        + (f"?{query}" if parts.query else "")
        + (f"#{parts.fragment}" if parts.fragment else "")
    )
