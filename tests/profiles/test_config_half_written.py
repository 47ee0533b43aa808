"""docs/configuration.md#validation: a config file written in place is read once its writer
closes it, never half written (real inotify, a real second process writing).

A save that truncates and rewrites ``config.yaml`` (``echo … > config.yaml``, an editor
writing in place) passes through prefixes that are valid YAML and weaker than either
version: the deny rules not written yet, ``mode: strict`` still to come. Before, a
writer pausing longer than the debounce got that prefix loaded.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor

GUARDED = "approvals:\n  mode: manual\n  unattended: deny\n  deny: ['git push *']\n"
# A prefix of the new version: valid YAML, and without the deny rule yet.
PREFIX = "approvals:\n  mode: manual\n"
REST = "  unattended: deny\n  deny: ['git push *', 'git tag *']\n"
WATCHED = "profiles_dir: profiles\nwatch: {mode: inotify, debounce_ms: 20}\n"

# Writes its first argument into the file, waits for a line on stdin, writes the second
# and closes: a writer that pauses mid-save for as long as the test likes.
_WRITER = """
import sys
path, first, rest = sys.argv[1:4]
with open(path, "w") as f:
    f.write(first)
    f.flush()
    print("written", flush=True)
    sys.stdin.readline()
    f.write(rest)
print("closed", flush=True)
"""


class _Writer:
    def __init__(self, path: Path, first: str, rest: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), first, rest],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "written\n"

    def finish(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "closed\n"
        assert self.proc.wait(timeout=10) == 0


@pytest.fixture
def writers() -> Iterator[list[_Writer]]:
    made: list[_Writer] = []
    yield made
    for writer in made:
        writer.proc.kill()
        writer.proc.wait()


def _until(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _outcome(sup: Supervisor, line: str) -> str:
    return sup.test("p", line, context="api").outcome.value


def test_a_half_written_config_is_not_loaded(make_home, supervisor_of, writers) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(WATCHED)
    sup.start()
    assert _outcome(sup, "git push origin main") == "blocked"
    writer = _Writer(home / "config.yaml", PREFIX, REST)
    writers.append(writer)
    time.sleep(0.6)  # thirty debounce periods with the prefix on disk
    assert (home / "config.yaml").read_text() == PREFIX
    assert _outcome(sup, "git push origin main") == "blocked"  # the last whole config
    writer.finish()
    assert _until(lambda: _outcome(sup, "git tag v1") == "blocked")  # the new one, whole
    assert _outcome(sup, "git push origin main") == "blocked"
    assert sup.watcher is not None and sup.watcher.errors == 0


def test_a_new_home_is_served_once_its_config_is_whole(make_home, supervisor_of, writers) -> None:  # type: ignore[no-untyped-def]
    make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(WATCHED)
    sup.start()
    home = Path(sup.profiles["p"].home).parent / "q"
    home.mkdir()
    writer = _Writer(home / "config.yaml", PREFIX, REST)
    writers.append(writer)
    time.sleep(0.6)
    assert "q" not in sup.profiles  # never served with the deny rules still to come
    writer.finish()
    assert _until(lambda: "q" in sup.profiles)
    assert sup.test("q", "git push origin main", context="api").outcome.value == "blocked"


def test_a_half_written_multiplex_yaml_is_not_applied(
    make_home, supervisor_of, writers, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    make_home("p", GUARDED)
    make_home("r", "")
    config = "profiles_dir: profiles\nwatch: {mode: inotify, debounce_ms: 20}\n"
    sup: Supervisor = supervisor_of(config + "default_profile: p\n")
    sup.start()
    # A prefix that parses: its profiles_dir is not written yet (it would serve no home).
    first, rest = "watch: {mode: inotify, debounce_ms: 20}\n", "profiles_dir: profiles\n"
    writer = _Writer(tmp_path / "multiplex.yaml", first, rest)
    writers.append(writer)
    time.sleep(0.6)
    assert sorted(sup.profiles) == ["p", "r"] and sup.config.default_profile == "p"
    writer.finish()
    assert _until(lambda: sup.config.default_profile != "p")  # the whole file has none
    assert sorted(sup.profiles) == ["p", "r"]
