"""What the config watcher's inotify watches reach (docs/configuration.md#the-watcher).

A recursive watch over a folder of homes covers the folder, each home and each
home's ``credentials/`` tree, nothing deeper: the lines the supervisor appends to
``logs/`` and an agent's working tree cost no watch and wake nothing. Read off
the real inotify instance (``/proc/self/fdinfo``), with real files.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex.watching import ConfigWatcher
from multiplex.watching._inotify import watched_below

WAIT = 10.0  # generous: a timeout here means "never arrived", not "slow"


def _inotify_fds() -> set[int]:
    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify":
                found.add(int(name))
        except OSError:
            continue
    return found


def _watched_inodes(fd: int) -> set[int]:
    with open(f"/proc/self/fdinfo/{fd}") as f:
        return {
            int(field.split(":", 1)[1], 16)
            for line in f
            if line.startswith("inotify ")
            for field in line.split()
            if field.startswith("ino:")
        }


def _home(root: Path, name: str) -> Path:
    home = root / name
    for sub in ("logs", "work/deep/er", "credentials/api/v1"):
        (home / sub).mkdir(parents=True)
    (home / "config.yaml").write_text("approvals: {mode: manual}\n")
    (home / ".env").write_text("A=1\n")
    return home


class Calls:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.cond = threading.Condition()

    def __call__(self, name: str) -> None:
        with self.cond:
            self.names.append(name)
            self.cond.notify_all()

    def wait_for(self, name: str) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: name in self.names, WAIT)


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[tuple[ConfigWatcher, int, Calls]]:
    calls = Calls()
    before = _inotify_fds()
    watcher = ConfigWatcher(calls, mode="inotify", debounce_ms=20)
    for name in ("alpha", "beta"):
        watcher.watch(name, _home(tmp_path / "profiles", name))
    watcher.start()
    (fd,) = _inotify_fds() - before
    try:
        yield watcher, fd, calls
    finally:
        watcher.stop()


def _ino(path: Path) -> int:
    return os.stat(path).st_ino


def test_a_folder_of_homes_is_watched_down_to_each_home_and_its_credentials(
    tmp_path: Path, watching: tuple[ConfigWatcher, int, Calls]
) -> None:
    _, fd, _ = watching
    root = tmp_path / "profiles"
    watched = _watched_inodes(fd)
    for home in (root / "alpha", root / "beta"):
        for reached in ("", "credentials", "credentials/api", "credentials/api/v1"):
            assert _ino(home / reached) in watched, home / reached
        for skipped in ("logs", "work", "work/deep", "work/deep/er"):
            assert _ino(home / skipped) not in watched, home / skipped
    assert _ino(root) in watched


def test_a_home_made_later_is_watched_the_same_way(
    tmp_path: Path, watching: tuple[ConfigWatcher, int, Calls]
) -> None:
    watcher, fd, calls = watching
    gamma = _home(tmp_path / "profiles", "gamma")
    watcher.watch("gamma", gamma)
    (gamma / "credentials" / "late").mkdir()
    (gamma / "credentials" / "late" / "token").write_text("t")
    assert calls.wait_for("gamma")  # an edit deep in its credentials reloads it
    watched = _watched_inodes(fd)
    assert _ino(gamma / "credentials" / "late") in watched
    assert not {_ino(gamma / "logs"), _ino(gamma / "work")} & watched


def test_appending_to_logs_reloads_nothing_while_credentials_edits_do(
    tmp_path: Path, watching: tuple[ConfigWatcher, int, Calls]
) -> None:
    _, _, calls = watching
    alpha = tmp_path / "profiles" / "alpha"
    for _ in range(20):
        with (alpha / "logs" / "decisions.jsonl").open("a") as f:
            f.write("{}\n")
    (alpha / "work" / "deep" / "config.yaml").write_text("not the home's\n")
    # A barrier: beta's credentials edit is read after the noise above.
    (tmp_path / "profiles" / "beta" / "credentials" / "api" / "v1" / "key").write_text("k")
    assert calls.wait_for("beta")
    assert "alpha" not in calls.names


@pytest.mark.parametrize(
    ("root", "path", "watched"),
    [
        (b"/p", b"/p", True),
        (b"/p", b"/p/home", True),
        (b"/p", b"/p/home/credentials", True),
        (b"/p", b"/p/home/credentials/a/b", True),
        (b"/p", b"/p/home/logs", False),
        (b"/p", b"/p/home/work/credentials", False),
        (b"/p", b"/elsewhere", False),
        (b"/h/credentials", b"/h/credentials/a/b/c", True),  # a lone home's credentials
    ],
)
def test_watched_below(root: bytes, path: bytes, watched: bool) -> None:
    assert watched_below(root, path) is watched
