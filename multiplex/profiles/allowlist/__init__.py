"""A profile's allow rules: the store, grants and their conditions, and the locked round-trip writes of ``command_allowlist`` (docs/allowlist.md)."""
