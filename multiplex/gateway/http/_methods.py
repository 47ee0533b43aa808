"""405 names every method a path serves (docs/gateway.md#request-bodies).

Starlette answers a method a path does not serve with the ``Allow`` of the
first route whose path matched, so ``OPTIONS /v1/runs`` said ``Allow: POST``
although ``GET /v1/runs`` exists. :func:`method_not_allowed` answers the same
405 with every method of that path: those of the OpenAPI schema's operations
whose path template matches, and the ones Starlette named (routes kept out of
the schema, such as ``/static/{name}``). ``OPTIONS`` is one such method: the
gateway answers no CORS preflight (its dashboard is same-origin).
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import compile_path

__all__ = ["allowed_methods", "method_not_allowed"]

_HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
# The schema of an app is built once; its table of paths with it.
_tables: dict[int, tuple[dict[str, Any], list[tuple[re.Pattern[str], set[str]]]]] = {}


def _table(app: FastAPI) -> list[tuple[re.Pattern[str], set[str]]]:
    schema = app.openapi()
    cached = _tables.get(id(app))
    if cached is not None and cached[0] is schema:
        return cached[1]
    table = [
        (compile_path(path)[0], {m.upper() for m in operations if m in _HTTP_METHODS})
        for path, operations in schema.get("paths", {}).items()
    ]
    _tables[id(app)] = (schema, table)
    return table


def allowed_methods(request: Request, named: str = "") -> list[str]:
    """Every method the app serves at this request's path, sorted; ``named``: Starlette's ``Allow``."""
    methods = {m.strip() for m in named.split(",") if m.strip()}
    for pattern, served in _table(request.app):
        if pattern.match(request.url.path):
            methods |= served
    return sorted(methods)


async def method_not_allowed(request: Request, exc: Exception) -> JSONResponse:
    """The app's 405: ``Allow`` lists every method of the path."""
    named = exc.headers.get("Allow", "") if isinstance(exc, HTTPException) and exc.headers else ""
    return JSONResponse(
        {"detail": f"{request.method} is not served at this path; see Allow"},
        status_code=405,
        headers={"Allow": ", ".join(allowed_methods(request, named))},
    )
