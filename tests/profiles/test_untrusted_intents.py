"""A file a sandboxed command plants never becomes an allowlist rule (docs/allowlist.md#several-processes-one-file).

The group commit writes every live intent it finds. These tests plant intents
the way an agent could (next to config.yaml, as the old scheme read them, and
inside the state folder, as the current one reads them) and then grant
something through the real CLI or ``AllowlistStore.grant``: only the operator's
rule may reach the file.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from multiplex.profiles import AllowlistStore
from multiplex.profiles._loader import read_allowlist
from multiplex.profiles.allowlist._intents import MAX_INTENT_BYTES, STATE_DIR
from tests.conftest import run_cli
from tests.profiles.intents import Poster

CONFIG = "# operator\ncommand_allowlist:\n  - 'ls *'\n"
HOSTILE = ["bash *", "sh *", "curl *"]
WriteConfig = Callable[[str], Path]
SETUP = "profiles_dir: profiles\ndefault_profile: delta\n"

# Holds an exclusive flock on argv[1] (opened without following a link) until stdin closes.
_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NOFOLLOW)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def home(make_home: Callable[[str, str], Path]) -> Path:
    return Path(make_home("delta", CONFIG))


def state(home: Path) -> Path:
    folder = home / STATE_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def plant(folder: Path, name: str, content: bytes | str, mode: int = 0o600) -> Path:
    path = folder / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    path.chmod(mode)
    return path


def new_name(pid: object = "") -> str:
    """A name as the current scheme posts it (the pid, if any, means nothing to it)."""
    return f"config.yaml.intent-{time.time_ns():020d}-{pid}aaaa.json"


def old_name(pid: object) -> str:
    """A name as the old scheme posted it, next to config.yaml, trusted by its pid."""
    return f".config.yaml.allowlist-intent-{1:020d}-{pid}-aaaa.json"


def held(path: Path, *prefix: str) -> subprocess.Popen[str]:
    """A live process holding ``path``'s lock, as a waiting poster would (``prefix``: run it in)."""
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-c", _HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


@pytest.fixture
def holders() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        proc.communicate("", timeout=10)


def cli_add(home: Path, write_config: WriteConfig, rule: str) -> None:
    config = write_config(SETUP)
    result = run_cli("--config", str(config), "allowlist", "add", "-p", "delta", rule)
    assert result.returncode == 0, result.stderr


def grant(home: Path, rule: str) -> None:
    AllowlistStore(home / "config.yaml").grant(rule)


@pytest.mark.parametrize("pid", [1, "x", os.getpid()], ids=["pid-1", "non-numeric", "own-pid"])
def test_an_intent_planted_next_to_the_config_never_becomes_a_rule(
    home: Path, write_config: WriteConfig, pid: object
) -> None:
    planted = plant(home, old_name(pid), json.dumps(HOSTILE))
    cli_add(home, write_config, "git status")
    assert read_allowlist(home / "config.yaml") == ["ls *", "git status"]
    grant(home, "make")
    assert read_allowlist(home / "config.yaml") == ["ls *", "git status", "make"]
    assert planted.exists()  # not ours to read: the current scheme never looks there


@pytest.mark.parametrize(
    "pid", [1, "x-", f"{os.getpid()}-"], ids=["pid-1", "non-numeric", "own-pid"]
)
def test_an_unlocked_intent_in_the_state_folder_is_dropped_not_granted(
    home: Path, write_config: WriteConfig, pid: object
) -> None:
    # Well formed, ours, 0600: only the lock tells it from a waiting poster's, and nobody holds it.
    planted = plant(state(home), new_name(pid), json.dumps(HOSTILE))
    cli_add(home, write_config, "git status")
    assert read_allowlist(home / "config.yaml") == ["ls *", "git status"]
    assert not planted.exists()
    planted = plant(state(home), new_name(pid), json.dumps(HOSTILE))
    grant(home, "make")
    assert read_allowlist(home / "config.yaml") == ["ls *", "git status", "make"]
    assert not planted.exists()


def test_a_symlinked_intent_is_never_followed_nor_admitted(
    home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = plant(tmp_path, "rules.json", json.dumps(HOSTILE))
    link = state(home) / new_name()
    link.symlink_to(elsewhere)
    with caplog.at_level(logging.WARNING, logger="multiplex.profiles"):
        grant(home, "make")
    assert read_allowlist(home / "config.yaml") == ["ls *", "make"]
    assert not os.path.lexists(link) and elsewhere.read_text() == json.dumps(HOSTILE)
    assert any(str(link) in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("content", "mode", "why"),
    [
        (json.dumps(HOSTILE), 0o644, "mode 0644"),
        (json.dumps(HOSTILE), 0o640, "mode 0640"),
        (json.dumps([*HOSTILE, "x" * MAX_INTENT_BYTES]), 0o600, "larger than"),
        (json.dumps({"rules": HOSTILE}), 0o600, "JSON list"),
        (json.dumps("bash *"), 0o600, "JSON list"),
        (b"\xff not json", 0o600, "JSON list"),
        (json.dumps(["curl *", 7]), 0o600, "JSON list"),
        (json.dumps(["curl *", "*"]), 0o600, "valid rules"),  # '*' alone is refused as a rule
    ],
    ids=["0644", "0640", "huge", "mapping", "string", "not-json", "not-text", "invalid-rule"],
)
def test_a_malformed_intent_is_refused_even_while_a_process_holds_its_lock(
    home: Path,
    holders: list[subprocess.Popen[str]],
    caplog: pytest.LogCaptureFixture,
    content: str | bytes,
    mode: int,
    why: str,
) -> None:
    planted = plant(state(home), new_name(), content, mode)
    holders.append(held(planted))  # looks live: the lock alone does not make it a grant
    with caplog.at_level(logging.WARNING, logger="multiplex.profiles"):
        grant(home, "make")
        grant(home, "make test")
    assert read_allowlist(home / "config.yaml") == ["ls *", "make", "make test"]
    assert not planted.exists()
    named = [r.getMessage() for r in caplog.records if str(planted) in r.getMessage()]
    assert len(named) == 1 and why in named[0], named  # once, naming the file and the reason


def test_an_intent_held_from_inside_a_sandbox_is_not_admitted(
    home: Path, write_config: WriteConfig, holders: list[subprocess.Popen[str]]
) -> None:
    # What a command in a bwrap sandbox (its own PID namespace) can do if it can write the
    # folder: plant a perfect intent and hold its lock for as long as the command runs.
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed")
    planted = plant(state(home), new_name(), json.dumps(HOSTILE))
    holders.append(held(planted, "bwrap", "--unshare-pid", "--dev-bind", "/", "/", "--"))
    cli_add(home, write_config, "git status")
    grant(home, "make")
    assert read_allowlist(home / "config.yaml") == ["ls *", "git status", "make"]
    assert planted.exists()  # left to its holder: a real poster would write its own grant


def test_a_real_poster_in_another_process_is_still_written_with_ours(home: Path) -> None:
    # The positive control for the tests above: a live poster of this user's, in this
    # PID namespace, posting the real way, shares the write.
    poster = Poster(home / "config.yaml", ["docker ps"])
    try:
        grant(home, "make")
    finally:
        poster.die()
    assert read_allowlist(home / "config.yaml") == ["ls *", "docker ps", "make"]
    assert not poster.intent.exists()


def test_a_state_folder_that_is_a_link_is_never_used(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home / STATE_DIR).symlink_to(elsewhere)
    planted = plant(elsewhere, new_name(), json.dumps(HOSTILE))
    holder = held(planted)
    try:
        grant(home, "make")  # written alone: no intent is posted or read through the link
    finally:
        holder.communicate("", timeout=10)
    assert read_allowlist(home / "config.yaml") == ["ls *", "make"]
    assert sorted(p.name for p in elsewhere.iterdir()) == [planted.name]


def test_a_planted_temp_name_or_lock_link_never_writes_through(home: Path, tmp_path: Path) -> None:
    victim = plant(tmp_path, "victim", "keep me\n", 0o644)
    temp = home / f".config.yaml.allowlist-{os.getpid()}-planted.tmp"
    temp.symlink_to(victim)
    grant(home, "make")
    assert read_allowlist(home / "config.yaml") == ["ls *", "make"]
    assert (
        not os.path.lexists(temp) and victim.read_text() == "keep me\n"
    )  # the link went, not the file
    lock = home / "config.yaml.lock"
    lock.unlink()
    lock.symlink_to(victim)
    store = AllowlistStore(home / "config.yaml")
    store.grant("make test")  # refused (logged), kept in memory, never through the link
    assert store.unsaved == {"make test"} and victim.read_text() == "keep me\n"
    assert read_allowlist(home / "config.yaml") == ["ls *", "make"]
