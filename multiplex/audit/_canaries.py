"""Canaries: unique marks each profile's sandbox copy carries (docs/audit.md).

No canary of profile A may ever be visible to profile B. Each profile gets a
secret (in ``.env``, redacted everywhere), a plain mark (in ``.env`` too, NOT
secret-looking, so it survives redaction and a leak through redacted output is
still visible), an allowlist rule, and a credential file with its own name and
content. They live only in the audit's private copy of the home.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CANARY_MANIFEST_ENV",
    "LEAK_COMMAND",
    "LEAK_RULES",
    "MARK_VAR",
    "TOKEN_VAR",
    "Canaries",
    "make_canaries",
    "read_manifest",
    "write_manifest",
]

TOKEN_VAR = "AUDIT_CANARY_TOKEN"  # looks secret: layer-1 redaction masks its value
MARK_VAR = "AUDIT_CANARY_MARK"  # does not look secret: visible in redacted output
CANARY_MANIFEST_ENV = "MULTIPLEX_AUDIT_CANARIES"

# The command each profile runs (context "cron") for the leak checks, split by
# markers so the environment, the cwd and the credential listing can be told
# apart; LEAK_RULES are added to the sandbox copy's allowlist so cron approves it.
LEAK_COMMAND = (
    'env; echo @@cwd; pwd; echo @@credentials; ls -la "$CREDENTIALS_DIRECTORY" 2>/dev/null'
)
LEAK_RULES = ("env", "echo @@*", "pwd", "ls -la *")

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Canaries:
    """The canary values of one profile's sandbox copy."""

    profile: str
    token: str
    mark: str
    program: str
    cred_name: str
    cred_content: str

    @property
    def rule(self) -> str:
        """The canary allowlist rule (a prefix rule on a program nobody else has)."""
        return f"{self.program} *"

    @property
    def command(self) -> str:
        """A command only this profile's canary rule approves."""
        return f"{self.program} x"

    @property
    def cred_relative(self) -> str:
        return f"credentials/{self.cred_name}"

    def labelled(self) -> Iterator[tuple[str, str]]:
        """(label, value) for every canary; labels never contain the value."""
        yield f"{TOKEN_VAR} (secret)", self.token
        yield MARK_VAR, self.mark
        yield "allowlist rule", self.program
        yield "credential file name", self.cred_name
        yield "credential file content", self.cred_content

    def found_in(self, text: str) -> list[str]:
        """Labels of this profile's canaries that occur in ``text``."""
        return [label for label, value in self.labelled() if value in text]

    def as_dict(self) -> dict[str, str]:
        return {
            "profile": self.profile,
            "token": self.token,
            "mark": self.mark,
            "program": self.program,
            "cred_name": self.cred_name,
            "cred_content": self.cred_content,
        }


def make_canaries(profile: str) -> Canaries:
    """Fresh random canaries for ``profile`` (unique per audit run)."""
    slug = _SLUG.sub("-", profile)[:40] or "p"
    rand = secrets.token_hex(6)
    return Canaries(
        profile=profile,
        token=f"canary-tok-{slug}-{rand}-{secrets.token_hex(8)}",
        mark=f"canary-mark-{slug}-{rand}",
        program=f"canary-rule-{slug}-{rand}",
        cred_name=f"audit-canary-{slug}-{rand}.txt",
        cred_content=f"canary-cred-{slug}-{rand}-{secrets.token_hex(8)}",
    )


def write_manifest(path: Path, canaries: Mapping[str, Canaries]) -> None:
    """Write every profile's canaries for the standalone probes (file mode 0600)."""
    data = {name: c.as_dict() for name, c in canaries.items()}
    path.touch(mode=0o600)
    path.write_text(json.dumps(data), encoding="utf-8")


def read_manifest(path: Path) -> dict[str, Canaries]:
    """The canaries a probe must look for (empty when the file is missing)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {name: Canaries(**fields) for name, fields in data.items()}
