"""Paths a command reads or writes: targets resolved where the line runs, secret stores,
persistence places, protected files and the writes of each program (docs/security.md)."""
