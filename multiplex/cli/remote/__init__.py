"""Commands for a running gateway and the small client they use (docs/cli.md#global-options)."""
