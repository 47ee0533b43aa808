"""docs/execution.md#unsandboxed-sandbox-none: an unsandboxed profile's credential folder
is kept from one run to the next, and still holds exactly the home's files as they are now.

Each run re-reads the home's credential files and compares the folder's copy; a copy the
command changed, a folder it removed or put a link in place of, a file rotated in the home
or refused now: the next run gets a new folder written whole. A run keeps its folder until
it ends; the folder goes when the process exits (a real second process here).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from multiplex import Supervisor

CONFIG = (
    "terminal:\n  sandbox: none\n  credential_files: [credentials/token.txt]\n  timeout: 10\n"
    "approvals:\n  mode: off\n"
)
SOURCE = "cred-a-abcdef123456\n"
DIGEST = 'D="$CREDENTIALS_DIRECTORY"; echo "$D"; sha256sum "$D/credentials/token.txt" | cut -c1-64'


@pytest.fixture
def sup(make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home("a", CONFIG, files={"credentials/token.txt": SOURCE})
    make_home("b", CONFIG, files={"credentials/token.txt": "cred-b-zyxwvu987654\n"})
    return supervisor_of("profiles_dir: profiles\nwatch: {mode: 'off'}\n")  # type: ignore[no-any-return]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _shown(sup: Supervisor, command: str = DIGEST, profile: str = "a") -> tuple[str, str]:
    result = sup.run(command, profile=profile, context="cron")
    folder, _, digest = result.stdout.strip().partition("\n")
    return folder, digest.strip()


def test_the_folder_serves_the_next_run_and_is_the_profiles_own(sup: Supervisor) -> None:
    folder, digest = _shown(sup)
    assert digest == _sha(SOURCE) and Path(folder).is_dir()
    assert _shown(sup) == (folder, digest)
    other, _ = _shown(sup, profile="b")
    assert other != folder


def test_a_rotated_file_is_the_next_runs(sup: Supervisor) -> None:
    folder, _ = _shown(sup)
    (sup.profiles["a"].home / "credentials/token.txt").write_text("cred-a-rotated-777777\n")
    again, digest = _shown(sup)
    assert digest == _sha("cred-a-rotated-777777\n") and again != folder
    assert not Path(folder).exists()  # replaced, and no run holds it


@pytest.mark.parametrize(
    "tamper",
    [
        'chmod u+w "$CREDENTIALS_DIRECTORY/credentials/token.txt"; '
        'echo forged > "$CREDENTIALS_DIRECTORY/credentials/token.txt"',
        'rm -rf "$CREDENTIALS_DIRECTORY"',
        'rm -f "$CREDENTIALS_DIRECTORY/credentials/token.txt"',
        'chmod 755 "$CREDENTIALS_DIRECTORY"',
        'D="$CREDENTIALS_DIRECTORY"; rm -f "$D/credentials/token.txt"; echo forged > /tmp/mx-forged-$$; '
        'ln -s /tmp/mx-forged-$$ "$D/credentials/token.txt"',
        'D="$CREDENTIALS_DIRECTORY"; rm -rf "$D"; mkdir -p /tmp/mx-elsewhere-$$; ln -s /tmp/mx-elsewhere-$$ "$D"',
    ],
)
def test_what_a_command_did_to_its_folder_is_undone(sup: Supervisor, tamper: str) -> None:
    folder, _ = _shown(sup)
    sup.run(tamper, profile="a", context="cron")
    elsewhere = os.path.realpath(folder)  # where a link put in its place points
    again, digest = _shown(sup)
    assert digest == _sha(SOURCE)  # the home's file, never the command's
    if "ln -s /tmp/mx-elsewhere" in tamper:
        assert again != folder and not os.path.lexists(folder)  # the link removed, not followed
        assert not os.listdir(elsewhere)  # nothing written there


def test_a_file_refused_now_is_not_in_the_folder(sup: Supervisor, tmp_path: Path) -> None:
    _shown(sup)
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE-SECRET-do-not-mount\n")
    token = sup.profiles["a"].home / "credentials/token.txt"
    token.unlink()
    token.symlink_to(outside)
    result = sup.run(
        'cat "$CREDENTIALS_DIRECTORY/credentials/token.txt"', profile="a", context="cron"
    )
    assert "OUTSIDE-SECRET" not in result.stdout + result.stderr
    assert "No such file" in result.stderr and "not mounted" in result.stderr


def test_a_run_keeps_its_folder_while_a_newer_one_serves(sup: Supervisor) -> None:
    seen: list[str] = []
    slow = threading.Thread(
        target=lambda: seen.append(
            sup.run(
                'D="$CREDENTIALS_DIRECTORY"; echo "$D"; sleep 1; sha256sum "$D/credentials/token.txt" | cut -c1-64',
                profile="a",
                context="cron",
            ).stdout
        )
    )
    slow.start()
    time.sleep(0.4)
    (sup.profiles["a"].home / "credentials/token.txt").write_text("cred-a-rotated-888888\n")
    newer, digest = _shown(sup)
    assert digest == _sha("cred-a-rotated-888888\n")
    slow.join()
    old, _, old_digest = seen[0].strip().partition("\n")
    assert old != newer and old_digest.strip() == _sha(SOURCE)  # read after the rotation
    assert not Path(old).exists() and Path(newer).is_dir()  # gone once its run ended


_SCRIPT = """
import sys
from multiplex import Supervisor
with Supervisor.from_config(sys.argv[1]) as sup:
    print(sup.run('echo "$CREDENTIALS_DIRECTORY"', profile="a", context="cron").stdout.strip())
"""


def test_the_folder_goes_when_the_process_exits(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("a", CONFIG, files={"credentials/token.txt": SOURCE})
    config = write_config("profiles_dir: profiles\nwatch: {mode: 'off'}\n")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(config)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder.name.startswith("multiplex-cred-a-") and not folder.exists()
