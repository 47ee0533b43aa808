"""Decision records: written, read back, their health, and the fatigue figures from them (docs/approvals.md#records)."""
