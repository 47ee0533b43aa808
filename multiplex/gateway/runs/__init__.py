"""Runs submitted over HTTP: their documents, the registry, prompts, how they stop, and the output they may keep (docs/gateway.md#runs, docs/operations.md#finished-output)."""
