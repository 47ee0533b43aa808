"""A small HTTP client for a running gateway (docs/cli.md#global-options), stdlib only.

Where it connects: ``--url``, else ``$MULTIPLEX_URL``, else the URL ``up``
wrote to ``.multiplex/url`` next to ``multiplex.yaml``, else ``gateway.host``
and ``gateway.port`` of ``multiplex.yaml``. Which token: ``--token``, else
``$MULTIPLEX_TOKEN``, else ``$MULTIPLEX_ADMIN_TOKEN``, else the admin token file
``up`` writes (``.multiplex/admin-token``).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from multiplex._errors import MultiplexError
from multiplex.cli._state import CliState
from multiplex.cli._up import ADMIN_TOKEN_ENV, admin_token_file, gateway_url_file

__all__ = ["GatewayClient", "GatewayError", "client_for"]

URL_ENV = "MULTIPLEX_URL"
TOKEN_ENV = "MULTIPLEX_TOKEN"


class GatewayError(MultiplexError):
    """The gateway could not be reached, refused the token, or refused the request."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def client_for(state: CliState) -> GatewayClient:
    """The client the global options and the environment point at."""
    config = state.config()
    base = config.base_dir
    url = state.url or os.environ.get(URL_ENV) or _read(gateway_url_file(base))
    if not url:
        host = config.gateway.host
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        url = f"http://{host if ':' not in host else f'[{host}]'}:{config.gateway.port}"
    token = (
        state.token
        or os.environ.get(TOKEN_ENV)
        or os.environ.get(ADMIN_TOKEN_ENV)
        or _read(admin_token_file(base))
    )
    return GatewayClient(url, token)


class GatewayClient:
    """JSON requests and server-sent events against one gateway with one bearer token."""

    def __init__(self, url: str, token: str | None, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._token = token
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
            return GatewayError(
                f"the gateway at {self.url} refused the token "
                "(--token, MULTIPLEX_TOKEN, or .multiplex/admin-token of a running `up`)",
                401,
            )
        try:
            detail = json.loads(exc.read()).get("detail", exc.reason)
        except (ValueError, AttributeError, OSError):
            detail = exc.reason
        if not isinstance(detail, str):
            detail = json.dumps(detail)
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
