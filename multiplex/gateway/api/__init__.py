"""The routes of the HTTP API and their models (docs/gateway.md)."""
