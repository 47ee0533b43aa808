"""The operator's policy commands: allowlist, approvals, suggestions, policy diff and decisions (docs/cli.md)."""
