"""A cloud's instance metadata service, however its address is written (pattern ``cloud-metadata``).

The service hands out the machine's credentials to whoever asks from it. Its
address is found in the line's text (``169.254.169.254``,
``metadata.google.internal``), and in every host a command names, read as the
programs read it: ``inet_aton``'s forms (``0xa9.0xfe.0xa9.0xfe``,
``169.254.43518``, ``0251.254.169.254``), IPv6 with the IPv4 address in hex
(``[::ffff:a9fe:a9fe]``), a wildcard DNS name carrying it
(``169-254-169-254.nip.io``, ``a9fea9fe.sslip.io``), curl's URL globs
(``169.254.169.25[4-4]``, ``{169,1}``) and the names clouds resolve to it
(``metadata``, ``instance-data``). Every address of the link-local range
(169.254.0.0/16) counts: the clouds keep their credential endpoints there
(EC2, ECS, EKS Pod Identity, Tencent). Never approved by an allow rule
(docs/allowlist.md#what-an-allow-rule-never-covers).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from multiplex.shell.detection._catalogue import CLOUD_METADATA, Finding
from multiplex.shell.detection.paths._writes import all_commands
from multiplex.shell.parsing._parsed import ParsedLine

__all__ = ["METADATA_WORDS", "each_metadata", "metadata_text"]

_METADATA = re.compile(
    r"169\.254\.\d{1,3}\.\d{1,3}|metadata\.google\.internal|metadata\.goog\b|fd00:ec2::"
    r"|100\.100\.100\.200|\b2852039166\b|0xa9fea9fe|0251\.0376\.0251\.0376|metadata\.azure",
    re.IGNORECASE,
)
# Each alternative of _METADATA holds one of these, lower-cased: one search in C first.
METADATA_WORDS = ("169.254", "metadata", "fd00:ec2::", "100.100.100.200", "2852039166",
                   "0xa9fea9fe", "0251.0376.0251.0376")  # fmt: skip
_METADATA_WORD = re.compile("|".join(re.escape(w) for w in METADATA_WORDS))


def metadata_text(text: str) -> re.Match[str] | None:
    """The metadata address written plainly in ``text``, if any."""
    return _METADATA.search(text) if _METADATA_WORD.search(text.lower()) else None


_LINK_LOCAL = ipaddress.ip_network("169.254.0.0/16")
_OTHERS = frozenset({ipaddress.ip_address("100.100.100.200")})  # Alibaba Cloud
_V6 = ipaddress.ip_network("fd00:ec2::/64")  # EC2's and EKS's IPv6 endpoints
_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
     "instance-data.ec2.internal", "metadata.azure.com", "metadata.packet.net"}
)  # fmt: skip
# Wildcard DNS services: a name under them resolves to the address its first labels spell.
_WILDCARD = re.compile(
    r"(?P<ip>.+?)\.(?:nip\.io|sslip\.io|xip\.io|traefik\.me|localtest\.me|lvh\.me|nip\.direct)$"
)
# A URL's host: after the scheme and any user, up to the port, path, query or fragment.
_URL_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@\s]*@)?(\[[^\]\s]*\]|[^:/?#\s'\"]+)")
# socat's and nc's address forms: TCP:HOST:PORT, TCP4-CONNECT:HOST:PORT …
_SOCAT = re.compile(r"(?i)(?:tcp|udp|ssl|openssl)[46]?(?:-connect)?:([^:,\s]+)")
_NETCAT = frozenset({"nc", "ncat", "netcat", "telnet", "socat", "nmap"})
_GLOB = re.compile(r"\[(\d+)-(\d+)\]|\{([^{}]*)\}")
_MAX_HOSTS = 64  # a glob's expansions looked at, at most


def _globbed(host: str) -> list[str]:
    """``host`` with curl's URL globs expanded (``[1-3]``, ``{a,b}``), at most _MAX_HOSTS."""
    hosts = [host]
    while (m := _GLOB.search(hosts[0])) is not None:
        if m.group(3) is not None:
            parts = m.group(3).split(",")
        else:
            low, high = int(m.group(1)), int(m.group(2))
            parts = [str(n) for n in range(low, min(high, low + _MAX_HOSTS) + 1)] or [""]
        hosts = [h[: m.start()] + p + h[m.end() :] for h in hosts for p in parts][:_MAX_HOSTS]
    return hosts


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    host = host.strip("[]").lower().rstrip(".")
    if ":" in host:
        try:
            v6 = ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            return None
        return v6.ipv4_mapped or v6.sixtofour or v6
    value = _inet_aton(host)
    return None if value is None else ipaddress.IPv4Address(value)


_PART = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")


def _inet_aton(host: str) -> int | None:
    """The address the C library's ``inet_aton`` reads in ``host`` (what curl, wget and
    nc connect to): 1 to 4 parts, each decimal, octal (``0251``) or hex (``0xa9``), the
    last filling the bytes left (``169.254.43518``, ``2852039166``)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_PART.fullmatch(p) for p in parts):
        return None
    numbers = [int(p, 16) if p[:2].lower() == "0x" else int(p, 8) if p[:1] == "0" else int(p)
               for p in parts]  # fmt: skip
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    value = 0
    for n in head:
        value = value << 8 | n
    return value << (8 * (4 - len(head))) | last


def _wildcard(host: str) -> str | None:
    """The address a wildcard DNS name spells: dotted, dashed or eight hex digits."""
    m = _WILDCARD.match(host.lower())
    if m is None:
        return None
    spelled = m.group("ip").split(".")[-4:]
    if len(spelled) == 1:  # one label: "169-254-169-254" or "a9fea9fe", after any prefix
        dashed = spelled[0].split("-")
        if re.fullmatch(r"[0-9a-f]{8}", dashed[-1]):  # magic-a9fea9fe.nip.io
            return str(ipaddress.IPv4Address(int(dashed[-1], 16)))
        return ".".join(dashed[-4:])  # magic-169-254-169-254.nip.io
    return ".".join(spelled)


def is_metadata_host(host: str) -> bool:
    """Whether ``host`` (a URL's, an operand of nc) reaches a metadata service."""
    for one in _globbed(host):
        name = one.strip("[]").lower().rstrip(".")
        if name in _NAMES:
            return True
        spelled = _wildcard(name)
        address = _address(spelled if spelled is not None else name)
        if address is not None and (
            address in _OTHERS
            or (address.version == 4 and address in _LINK_LOCAL)
            or (address.version == 6 and address in _V6)
        ):
            return True
    return False


def _hosts(word: str, netcat: bool) -> Iterator[str]:
    if "://" in word:
        yield from (m.group(1) for m in _URL_HOST.finditer(word))
    if netcat:
        yield from (m.group(1) for m in _SOCAT.finditer(word))
        if not word.startswith("-"):
            yield word


def each_metadata(parsed: ParsedLine) -> Iterator[Finding]:
    for text in (parsed.line, *parsed.variants):
        match = metadata_text(text)
        if match:
            yield Finding(CLOUD_METADATA, match.group(0))
            return
    for cmd in all_commands(parsed):
        netcat = cmd.program in _NETCAT
        for word in cmd.argv[1:]:  # (most words hold no URL: the generator is not made)
            if ("://" in word or netcat) and any(
                is_metadata_host(host) for host in _hosts(word, netcat)
            ):
                yield Finding(CLOUD_METADATA, word, cmd.text)
                return
    for payload in parsed.script_payloads:  # requests.get("http://0xa9fea9fe/")
        if "://" in payload and any(
            is_metadata_host(m.group(1)) for m in _URL_HOST.finditer(payload)
        ):
            yield Finding(CLOUD_METADATA, payload)
            return
