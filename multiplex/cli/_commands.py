"""Import every command module so each registers itself on the app."""

from multiplex.cli import _allowlist, _approvals, _audit, _profiles, _up  # noqa: F401
