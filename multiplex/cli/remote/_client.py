"""A small HTTP client for a running gateway (docs/cli.md#global-options), stdlib only.

Where it connects: ``--url``, else ``$MULTIPLEX_URL``, else the URL of the
running gateway's state entry next to ``multiplex.yaml`` (``_gateways``: the
one on ``gateway.port``, else the only one), else ``gateway.host`` and
``gateway.port`` of ``multiplex.yaml``. Which token: ``--token`` (``--token ""``
sends none), else ``$MULTIPLEX_TOKEN``, else ``$MULTIPLEX_ADMIN_TOKEN``, else
the admin token of that entry. A refusal says which token was sent, or that
none was and where the client looked.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

from multiplex._errors import MultiplexError
from multiplex.cli._state import CliState
from multiplex.cli.remote._gateways import gateways_dir, live_entries, pick_entry
from multiplex.cli.serving._up import ADMIN_TOKEN_ENV

__all__ = ["GatewayClient", "GatewayError", "client_for"]

URL_ENV = "MULTIPLEX_URL"
TOKEN_ENV = "MULTIPLEX_TOKEN"


class GatewayError(MultiplexError):
    """The gateway could not be reached, refused the token, or refused the request."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def client_for(state: CliState) -> GatewayClient:
    """The client the global options and the environment point at.

    With both a URL and a token given (options or environment) the local
    ``multiplex.yaml`` is not read: a gateway can be answered while that file is broken.
    """
    given = state.url or os.environ.get(URL_ENV) or None
    found = _given_token(state)
    if given and found is not None:
        return GatewayClient(given, found[0], source=found[1])
    config = state.config()
    base = config.base_dir
    entry = pick_entry(base, url=given, port=config.gateway.port)
    url = given or (entry.url if entry is not None else None)
    if not url:
        others = live_entries(base)
        if others:  # several gateways run here, none on the port the config names
            ports = ", ".join(e.url for e in others)
            raise GatewayError(
                f"{len(others)} gateways run from {base} ({ports}) and none on gateway.port "
                f"{config.gateway.port} of {state.config_path}: pick one with --url"
            )
        host = config.gateway.host
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        url = f"http://{host if ':' not in host else f'[{host}]'}:{config.gateway.port}"
    if found is not None:
        token, source = found
    elif entry is not None and entry.token:
        token, source = entry.token, str(entry.token_file)
    else:
        where = (
            f"the gateway entry {entry.folder} holds none (its token was set by {ADMIN_TOKEN_ENV})"
            if entry is not None
            else f"no running gateway's entry under {gateways_dir(base)}"
        )
        token, source = None, f"no --token, ${TOKEN_ENV} or ${ADMIN_TOKEN_ENV}, and {where}"
    return GatewayClient(url, token, source=source)


def _given_token(state: CliState) -> tuple[str | None, str] | None:
    """The token ``--token`` or the environment gives, and where from; None if neither."""
    if state.token is not None:
        return state.token or None, "--token" if state.token else "--token was empty"
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV], f"${TOKEN_ENV}"
    if os.environ.get(ADMIN_TOKEN_ENV):
        return os.environ[ADMIN_TOKEN_ENV], f"${ADMIN_TOKEN_ENV}"
    return None


class GatewayClient:
    """JSON requests and server-sent events against one gateway with one bearer token."""

    def __init__(
        self, url: str, token: str | None, *, timeout: float = 30.0, source: str = "--token"
    ) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self._source = source  # where the token came from, or why none was sent
        self._timeout = timeout

    def _request(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> urllib.request.Request:
        query = ""
        if params:
            clean = {k: v for k, v in params.items() if v is not None}
            query = "?" + urllib.parse.urlencode(clean, doseq=True) if clean else ""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path + query, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self._token:
            request.add_header("Authorization", f"Bearer {self._token}")
        return request

    def _open(self, request: urllib.request.Request, timeout: float | None) -> Any:
        try:
            return urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            raise self._refused(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise GatewayError(
                f"cannot reach the gateway at {self.url} ({reason}); is `multiplex up` running? "
                "(--url or MULTIPLEX_URL)"
            ) from None

    def _refused(self, exc: urllib.error.HTTPError) -> GatewayError:
        if exc.code == 401:
            if self._token is None:
                return GatewayError(
                    f"the gateway at {self.url} wants a token and none was sent ({self._source})",
                    401,
                )
            return GatewayError(
                f"the gateway at {self.url} refused the token from {self._source}", 401
            )
        try:
            detail = json.loads(exc.read()).get("detail", exc.reason)
        except (ValueError, AttributeError, OSError):
            detail = exc.reason
        if not isinstance(detail, str):
            detail = _one_line(detail)
        return GatewayError(f"{detail} (HTTP {exc.code})", exc.code)

    def get(self, path: str, **params: Any) -> Any:
        with self._open(self._request("GET", path, params=params), self._timeout) as response:
            return json.loads(response.read())

    def post(self, path: str, body: Any = None) -> Any:
        request = self._request("POST", path, body if body is not None else {})
        with self._open(request, self._timeout) as response:
            return json.loads(response.read())

    def events(self, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(event, data)`` pairs of an SSE stream until the server ends it."""
        with self._open(self._request("GET", path), None) as response:
            name: str | None = None
            for raw in response:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("event: "):
                    name = line[len("event: ") :]
                elif line.startswith("data: ") and name is not None:
                    try:
                        data = json.loads(line[len("data: ") :])
                    except ValueError:
                        continue
                    yield name, data if isinstance(data, dict) else {"value": data}
                    name = None


def _one_line(detail: Any) -> str:
    """A validation error's list (``[{"loc": ["body", "context"], "msg": …}]``) as one line
    naming each field: ``context: Input should be 'api' or 'gateway'``."""
    if isinstance(detail, list) and all(isinstance(d, dict) for d in detail):
        parts = []
        for item in detail:
            loc = [str(p) for p in item.get("loc", ()) if p not in ("body", "query", "path")]
            parts.append(f"{'.'.join(loc) or 'request'}: {item.get('msg', 'invalid')}")
        return "; ".join(parts)
    return " ".join(json.dumps(detail).split())
