"""Serving over HTTP: the app, uvicorn, tokens, headers, limits and bounds, JSON in and out (docs/gateway.md, docs/operations.md#connections-and-streams)."""
