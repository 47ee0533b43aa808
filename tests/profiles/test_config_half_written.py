"""docs/configuration.md#validation: a config file written in place is read once its writer
closes it, never half written (real inotify and polling, a real second process writing).

A save that truncates and rewrites ``config.yaml`` (``echo … > config.yaml``, an editor
writing in place) passes through prefixes that are valid YAML and weaker than either
version: the deny rules not written yet, ``mode: strict`` still to come. Before, a
writer pausing longer than the debounce got that prefix loaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.profiles import Profile

GUARDED = "approvals:\n  mode: manual\n  unattended: deny\n  deny: ['git push *']\n"
# A prefix of the new version: valid YAML, and without the deny rule yet.
PREFIX = "approvals:\n  mode: manual\n"
REST = "  unattended: deny\n  deny: ['git push *', 'git tag *']\n"
WATCHED = "profiles_dir: profiles\nwatch: {mode: inotify, debounce_ms: 20}\n"
MODES = pytest.mark.parametrize("mode", ["inotify", "polling"])


def _watched(mode: str) -> str:
    return WATCHED.replace("inotify", mode)


# Writes its first argument into the file, waits for a line on stdin, writes the second
# and closes: a writer that pauses mid-save for as long as the test likes.
_WRITER = """
import os, sys
path, first, rest = sys.argv[1:4]
os.makedirs(os.path.dirname(path), exist_ok=True)  # a new home: the folder, then at once its file
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


@MODES
def test_a_half_written_config_is_not_loaded(make_home, supervisor_of, writers, mode) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(_watched(mode))
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


@MODES
def test_a_new_home_is_served_once_its_config_is_whole(
    make_home, supervisor_of, writers, mode
) -> None:  # type: ignore[no-untyped-def]
    make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(_watched(mode))
    sup.start()
    # The writer makes the folder and at once the file: its create may come before the
    # folder's watch does, and the file is then found, not seen created.
    home = Path(sup.profiles["p"].home).parent / "q"
    writer = _Writer(home / "config.yaml", PREFIX, REST)
    writers.append(writer)
    time.sleep(0.6)
    assert "q" not in sup.profiles  # never served with the deny rules still to come
    writer.finish()
    assert _until(lambda: "q" in sup.profiles)
    assert sup.test("q", "git push origin main", context="api").outcome.value == "blocked"


@MODES
def test_a_half_written_multiplex_yaml_is_not_applied(
    make_home, supervisor_of, writers, tmp_path: Path, mode: str
) -> None:  # type: ignore[no-untyped-def]
    make_home("p", GUARDED)
    make_home("r", "")
    sup: Supervisor = supervisor_of(_watched(mode) + "default_profile: p\n")
    sup.start()
    # A prefix that parses: its profiles_dir is not written yet (it would serve no home).
    first, rest = f"watch: {{mode: {mode}, debounce_ms: 20}}\n", "profiles_dir: profiles\n"
    writer = _Writer(tmp_path / "multiplex.yaml", first, rest)
    writers.append(writer)
    time.sleep(0.6)
    assert sorted(sup.profiles) == ["p", "r"] and sup.config.default_profile == "p"
    writer.finish()
    assert _until(lambda: sup.config.default_profile != "p")  # the whole file has none
    assert sorted(sup.profiles) == ["p", "r"]


def test_a_home_moved_in_while_its_config_is_written_waits(
    make_home, supervisor_of, writers, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # The folder arrives before its watch: its config.yaml's create is never seen, only
    # found. Its writer still has it open, so it is not served yet.
    make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(WATCHED)
    sup.start()
    outside = tmp_path / "elsewhere" / "q"
    outside.mkdir(parents=True)
    writer = _Writer(outside / "config.yaml", PREFIX, REST)
    writers.append(writer)
    outside.rename(tmp_path / "profiles" / "q")
    time.sleep(0.6)
    assert "q" not in sup.profiles
    writer.finish()
    assert _until(lambda: "q" in sup.profiles)
    assert sup.test("q", "git tag v1", context="api").outcome.value == "blocked"


def test_a_home_moved_in_whole_is_served_at_once(make_home, supervisor_of, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Its files are reported created, and no close follows: the kernel says no writer has
    # them open.
    make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(WATCHED)
    sup.start()
    outside = tmp_path / "elsewhere" / "q"
    outside.mkdir(parents=True)
    (outside / "config.yaml").write_text(GUARDED)
    outside.rename(tmp_path / "profiles" / "q")
    assert _until(lambda: "q" in sup.profiles, seconds=5)


@MODES
def test_a_chmod_while_written_does_not_read_the_half(
    make_home, supervisor_of, writers, mode
) -> None:  # type: ignore[no-untyped-def]
    # A change of mode (an attribute event, never a close) mid-save is no sign it is done.
    home = make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(_watched(mode))
    sup.start()
    writer = _Writer(home / "config.yaml", PREFIX, REST)
    writers.append(writer)
    (home / "config.yaml").chmod(0o600)
    (home / ".env").write_text("X=1\n")  # and a whole file beside it changes too
    time.sleep(0.6)
    assert _outcome(sup, "git push origin main") == "blocked"
    writer.finish()
    assert _until(lambda: _outcome(sup, "git tag v1") == "blocked")


def test_a_config_hard_linked_into_a_new_home_is_served(
    make_home, supervisor_of, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # A link makes a create event and no close: the kernel says no writer has it open.
    make_home("p", GUARDED)
    sup: Supervisor = supervisor_of(WATCHED)
    sup.start()
    ready = tmp_path / "ready.yaml"
    ready.write_text(GUARDED)
    home = tmp_path / "profiles" / "q"
    home.mkdir()
    time.sleep(0.3)  # the new folder's watch is in place: the link is seen as created
    (home / "config.yaml").hardlink_to(ready)
    assert _until(lambda: "q" in sup.profiles, seconds=5)
    assert sup.test("q", "git push origin main", context="api").outcome.value == "blocked"


def test_a_reload_while_written_keeps_the_last_good_config(make_home, writers) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", GUARDED)
    profile = Profile("p", home)
    assert profile.reload().result == "ok"
    for name in ("config.yaml", ".env"):
        writer = _Writer(home / name, "approvals:\n" if name == "config.yaml" else "A=", "B\n")
        writers.append(writer)
        result = profile.reload()
        assert (result.result, result.news, profile.status) == ("waiting", False, "ok")
        assert profile.state.settings.approvals.deny == ("git push *",)
        writer.finish()
    (home / "config.yaml").write_text(GUARDED)
    assert profile.reload().result in ("ok", "unchanged")
    fresh = make_home("q", "")
    writer = _Writer(fresh / "config.yaml", PREFIX, REST)
    writers.append(writer)
    never = Profile("q", fresh)
    assert never.reload().result == "waiting" and not never.loaded
    assert never.error is not None and "being written" in never.error
    writer.finish()
    assert never.reload().result == "ok" and never.loaded


def test_a_fifo_as_config_is_refused_not_waited_on(make_home) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", GUARDED)
    (home / "config.yaml").unlink()
    os.mkfifo(home / "config.yaml")
    profile = Profile("p", home)
    assert profile.reload().result == "error"  # returns: never blocks on the FIFO
    assert profile.error is not None and "not a regular file" in profile.error


def test_a_writer_holding_the_file_long_is_said_once(
    make_home, writers, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    from multiplex.profiles import _profile

    monkeypatch.setattr(_profile, "_LONG_WRITE_S", 0.0)
    home = make_home("p", GUARDED)
    profile = Profile("p", home)
    assert profile.reload().result == "ok"
    writer = _Writer(home / "config.yaml", PREFIX, REST)
    writers.append(writer)
    with caplog.at_level("DEBUG", logger="multiplex"):
        for _ in range(3):
            assert profile.reload().result == "waiting"
    said = [r for r in caplog.records if r.levelname == "WARNING" and "being written" in r.message]
    assert len(said) == 1 and "the running config stays" in said[0].message
    writer.finish()
    assert profile.reload().result == "ok"
