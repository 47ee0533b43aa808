"""The rule language of allowlists and deny lists, and what a deny rule means (docs/allowlist.md#rules)."""
