"""Programs whose options, scripts or input carry other commands (docs/allowlist.md#options-that-run-programs)."""
