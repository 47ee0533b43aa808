"""Real intent posters for the group-commit tests: other processes, posting the real way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["Poster"]

_POSTER = """
import json, sys
from pathlib import Path
from multiplex.profiles.allowlist._intents import open_state_dir, post_intent
target = Path(sys.argv[1])
intent = post_intent(open_state_dir(target), target.name, json.dumps(sys.argv[2:]).encode())
print(intent.name, flush=True)
sys.stdin.read()  # holds the intent's lock until told to go, as a waiting grant() does
"""


class Poster:
    """A process that posted ``rules`` for ``config`` and waits, holding its intent's lock."""

    def __init__(self, config: Path, rules: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _POSTER, str(config), *rules],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        name = self.proc.stdout.readline().strip()
        assert name, "the poster did not post"
        self.intent = config.parent / ".multiplex-state" / name

    def die(self) -> Poster:
        """Exit without withdrawing the intent, as a process killed while waiting."""
        self.proc.communicate("")
        return self
