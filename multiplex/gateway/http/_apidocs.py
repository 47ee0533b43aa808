"""``/docs`` and ``/redoc`` served offline: the Swagger UI and ReDoc assets come from the
``fastapi-offline`` package on disk, never from a CDN (docs/gateway.md#api-documentation)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

__all__ = ["ASSETS", "mount_api_docs"]

ASSETS = Path(str(files("fastapi_offline") / "static"))
_FILES = {"swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png"}
_PREFIX = "/api-docs-assets"


def mount_api_docs(app: FastAPI) -> None:
    """Add ``/docs``, ``/redoc`` and their assets to an app built with ``docs_url=None``."""
    title = f"{app.title} API"

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=title,
            swagger_js_url=f"{_PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{_PREFIX}/swagger-ui.css",
            swagger_favicon_url=f"{_PREFIX}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=title,
            redoc_js_url=f"{_PREFIX}/redoc.standalone.js",
            redoc_favicon_url=f"{_PREFIX}/favicon.png",
            with_google_fonts=False,
        )

    @app.get(_PREFIX + "/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name in _FILES and (ASSETS / name).is_file():
            return FileResponse(ASSETS / name)
        return JSONResponse({"detail": "not found"}, status_code=404)
