"""Consent that outlives one prompt: always answers, session grants, suggestions and bound files (docs/allowlist.md#grants)."""
