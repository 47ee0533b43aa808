"""The named patterns and the checks that find them in a simple command (docs/approvals.md#order-of-checks)."""
