"""The config watcher (docs/design.md, docs/configuration.md#supervisor-config-multiplexyaml ``watch``, docs/allowlist.md, docs/gateway.md ``/readyz``): real files, real
inotify, real ``sed``/``mv`` subprocesses. Waits use Conditions with generous
timeouts; nothing asserts on elapsed time."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from multiplex._errors import ConfigError
from multiplex.watching import ConfigWatcher

WAIT = 5.0  # generous: a timeout here means "never arrived", not "slow"
MODES = ["inotify", "polling"]


class Calls:
    """Records on_change calls; lets a test wait for a condition on them."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.threads: set[str] = set()
        self.cond = threading.Condition()

    def __call__(self, name: str) -> None:
        with self.cond:
            self.names.append(name)
            self.threads.add(threading.current_thread().name)
            self.cond.notify_all()

    def count(self, name: str) -> int:
        with self.cond:
            return self.names.count(name)

    def wait_for(self, pred: Callable[[list[str]], bool], timeout: float = WAIT) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: pred(self.names), timeout)

    def wait_count(self, name: str, n: int, timeout: float = WAIT) -> bool:
        return self.wait_for(lambda names: names.count(name) >= n, timeout)


def make_home(root: Path, name: str, text: str = "approvals: {mode: manual}\n") -> Path:
    home = root / name
    (home / "logs").mkdir(parents=True)
    (home / "config.yaml").write_text(text)
    (home / ".env").write_text("A=1\n")
    return home


def inotify_instances() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own fd, closed meanwhile
            n += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    return n


def watcher_threads() -> set[threading.Thread]:
    return set(threading.enumerate())


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def make_watcher(calls: Calls) -> Iterator[Callable[..., ConfigWatcher]]:
    made: list[ConfigWatcher] = []

    def make(mode: str = "inotify", **kw: object) -> ConfigWatcher:
        w = ConfigWatcher(calls, mode=mode, poll_interval=0.05, **kw)  # type: ignore[arg-type]
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop()


def settle(home: Path, calls: Calls, name: str) -> int:
    """Edit ``home`` and wait for its callback: the watch is live (polling takes its
    first snapshot asynchronously), and every event observed before this edit has
    been routed. Returns the callback count for ``name`` afterwards."""
    before = calls.count(name)
    cfg = home / "config.yaml"
    cfg.write_text(cfg.read_text() + "# settle\n")
    assert calls.wait_count(name, before + 1), f"edit of {name} never called back"
    return calls.count(name)


# --- each editor-style save is seen --------------------------------------------------


def save_in_place(home: Path) -> None:
    with open(home / "config.yaml", "r+") as f:
        f.seek(0)
        f.write("approvals: {mode: strict}\n")
        f.truncate()


def save_vim_style(home: Path) -> None:
    cfg = home / "config.yaml"
    swp = home / ".config.yaml.swp"
    swp.write_text("swap")
    backup = home / "config.yaml~"
    os.rename(cfg, backup)
    cfg.write_text("approvals: {mode: off}\n")
    backup.unlink()
    swp.unlink()


def save_sed_i(home: Path) -> None:
    subprocess.run(["sed", "-i", "s/manual/smart/", "config.yaml"], cwd=home, check=True)


def save_tmp_then_mv(home: Path) -> None:
    tmp = home / "config.yaml.tmp"
    tmp.write_text("command_allowlist: [ls]\n")
    subprocess.run(["mv", str(tmp), str(home / "config.yaml")], check=True)


def save_delete_recreate(home: Path) -> None:
    (home / "config.yaml").unlink()
    (home / "config.yaml").write_text("approvals: {mode: manual}\n")


def save_dotenv(home: Path) -> None:
    (home / ".env").write_text("A=2\n")


def save_tmp_from_outside(home: Path) -> None:
    # A temp file written outside any watched directory and moved in.
    outside = home.parent.parent / "outside.tmp"
    outside.write_text("approvals: {mode: strict}\n")
    subprocess.run(["mv", str(outside), str(home / "config.yaml")], check=True)


SAVES = [
    save_in_place,
    save_vim_style,
    save_sed_i,
    save_tmp_then_mv,
    save_delete_recreate,
    save_dotenv,
    save_tmp_from_outside,
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grouped", [True, False], ids=["shared-dir", "lone-home"])
@pytest.mark.parametrize("save", SAVES, ids=lambda f: f.__name__)
def test_editor_save_is_seen(
    tmp_path: Path,
    calls: Calls,
    make_watcher: Callable[..., ConfigWatcher],
    mode: str,
    grouped: bool,
    save: Callable[[Path], None],
) -> None:
    root = tmp_path / "profiles"
    home = make_home(root, "alpha")
    w = make_watcher(mode)
    w.watch("alpha", home)
    if grouped:  # a second home in the same directory: one recursive watch on the parent
        w.watch("beta", make_home(root, "beta"))
    w.start()
    assert w.mode == mode
    seen = settle(home, calls, "alpha")
    save(home)
    assert calls.wait_count("alpha", seen + 1), f"{save.__name__} not seen in {mode} mode"
    assert "beta" not in calls.names


@pytest.mark.parametrize("mode", MODES)
def test_unrelated_files_do_not_call_back(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher], mode: str
) -> None:
    root = tmp_path / "profiles"
    alpha, beta = make_home(root, "alpha"), make_home(root, "beta")
    w = make_watcher(mode)
    w.watch("alpha", alpha)
    w.watch("beta", beta)
    w.start()
    settle(alpha, calls, "alpha")
    # Noise in a home, then a real edit of ANOTHER home as a marker: once the marker's
    # callback has arrived, the noise (written before it) would have arrived too.
    (alpha / "logs" / "decisions.jsonl").write_text("{}\n")
    (alpha / "notes.txt").write_text("x")
    (alpha / "cache").mkdir()
    (alpha / "cache" / "config.yaml").write_text("not the home's config\n")
    (alpha / "config.yaml").read_text()  # the supervisor's own reload reads it
    # Two barrier edits of another home: the second is observed strictly after the
    # noise (a later inotify read or a later poll), so by its callback any callback
    # the noise caused would have been delivered.
    settle(beta, calls, "beta")
    settle(beta, calls, "beta")
    assert calls.names.count("alpha") == 1  # only the first settle() edit


# --- debounce --------------------------------------------------------------------------


def test_burst_gives_one_callback_per_home(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher]
) -> None:
    root = tmp_path / "profiles"
    homes = {n: make_home(root, n) for n in ("alpha", "beta", "gamma")}
    # 500 ms: far longer than the gaps between the writes of one burst below.
    w = make_watcher("inotify", debounce_ms=500)
    for n, h in homes.items():
        w.watch(n, h)
    w.start()
    for i in range(20):  # one burst per home, interleaved: 40 writes each
        for h in homes.values():
            (h / "config.yaml").write_text(f"# edit {i}\n")
            (h / ".env").write_text(f"A={i}\n")
    assert calls.wait_for(lambda names: set(names) == set(homes))
    # A marker edit on a fourth home, observed after every write of the bursts: its
    # callback falls due after any second callback of a burst would have.
    marker = make_home(root, "marker")
    w.watch("marker", marker)
    save_in_place(marker)
    assert calls.wait_count("marker", 1)
    assert sorted(calls.names[:3]) == sorted(homes)
    assert calls.names.count("alpha") == calls.names.count("beta") == 1
    assert calls.names.count("gamma") == 1
    assert calls.threads == {"multiplex-watcher-dispatch"}


def test_homes_are_independent(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher]
) -> None:
    root = tmp_path / "profiles"
    alpha, beta = make_home(root, "alpha"), make_home(root, "beta")
    w = make_watcher("inotify", debounce_ms=20)
    w.watch("alpha", alpha)
    w.watch("beta", beta)
    w.start()
    save_in_place(alpha)
    assert calls.wait_count("alpha", 1)
    save_in_place(beta)
    assert calls.wait_count("beta", 1)
    save_sed_i(alpha)
    assert calls.wait_count("alpha", 2)
    assert calls.names == ["alpha", "beta", "alpha"]


# --- failures ------------------------------------------------------------------------


def test_raising_callback_does_not_kill_the_watcher(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "profiles"
    alpha = make_home(root, "alpha")
    good = Calls()

    def on_change(name: str) -> None:
        good(name)
        if good.count(name) <= 3:
            raise RuntimeError(f"broken reload\nof {name}")

    w = ConfigWatcher(on_change, mode="inotify", debounce_ms=10)
    w.watch("alpha", alpha)
    w.start()
    try:
        for i in range(1, 5):
            (alpha / "config.yaml").write_text(f"# {i}\n")
            assert good.wait_count("alpha", i), f"delivery {i} lost after an error"
        assert w.errors == 3
        assert w.last_error == "RuntimeError: broken reload of alpha"
        assert w.alive
        logged = [r for r in caplog.records if "broken reload" in r.getMessage()]
        assert len(logged) == 1 and logged[0].levelname == "ERROR"
    finally:
        w.stop()


def test_unwatch_stops_callbacks_for_that_home(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher]
) -> None:
    root = tmp_path / "profiles"
    alpha, beta, gamma = (make_home(root, n) for n in ("alpha", "beta", "gamma"))
    w = make_watcher("inotify")
    for n, h in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
        w.watch(n, h)
    w.start()
    settle(alpha, calls, "alpha")
    w.unwatch("alpha")
    save_in_place(alpha)
    save_dotenv(alpha)
    save_in_place(beta)  # marker: delivered after alpha's events would have been
    assert calls.wait_count("beta", 1)
    # Down to a lone home: the watch moves from the shared parent to beta itself.
    w.unwatch("gamma")
    save_sed_i(beta)
    assert calls.wait_count("beta", 2)
    assert calls.names.count("alpha") == 1
    assert "gamma" not in calls.names
    assert w.alive


class Gate:
    """A callback that blocks on its first call until released."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.calls = Calls()

    def __call__(self, name: str) -> None:
        self.entered.set()
        self.release.wait(WAIT)
        self.calls(name)


def test_unwatch_waits_for_a_callback_in_progress(tmp_path: Path) -> None:
    alpha, beta = make_home(tmp_path, "alpha"), make_home(tmp_path, "beta")
    gate = Gate()
    w = ConfigWatcher(gate, mode="inotify", debounce_ms=0)
    w.watch("alpha", alpha)
    w.watch("beta", beta)
    w.start()
    try:
        save_in_place(alpha)
        assert gate.entered.wait(WAIT)
        unwatcher = threading.Thread(target=w.unwatch, args=("alpha",))
        unwatcher.start()
        unwatcher.join(0.3)
        assert unwatcher.is_alive(), "unwatch returned while alpha's callback still ran"
        gate.release.set()
        unwatcher.join(WAIT)
        assert not unwatcher.is_alive()
        delivered = gate.calls.count("alpha")
        assert delivered >= 1
        # After unwatch returned: nothing more for alpha, even for events already queued.
        save_in_place(alpha)
        settle(beta, gate.calls, "beta")
        assert gate.calls.count("alpha") == delivered
    finally:
        w.stop()


def test_stop_waits_for_the_running_callback_and_drops_pending(tmp_path: Path) -> None:
    alpha, beta = make_home(tmp_path, "alpha"), make_home(tmp_path, "beta")
    gate = Gate()
    w = ConfigWatcher(gate, mode="inotify", debounce_ms=0)
    w.watch("alpha", alpha)
    w.watch("beta", beta)
    w.start()
    save_in_place(alpha)
    assert gate.entered.wait(WAIT)
    save_in_place(beta)  # pending behind alpha's running callback
    time.sleep(0.3)  # setup only: let the observer thread route beta's events
    stopper = threading.Thread(target=w.stop)
    stopper.start()
    stopper.join(0.3)
    assert stopper.is_alive(), "stop returned while a callback still ran"
    gate.release.set()
    stopper.join(WAIT)
    assert not stopper.is_alive()
    assert "beta" not in gate.calls.names  # pending work is dropped, not flushed
    assert not w.alive


def test_watch_after_start_and_home_created_later(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher]
) -> None:
    root = tmp_path / "profiles"
    root.mkdir()
    w = make_watcher("inotify")
    w.start()
    w.watch("late", root / "late")  # does not exist yet: its parent is watched
    make_home(root, "late")
    assert calls.wait_count("late", 1)


def test_a_deleted_lone_home_is_watched_again_when_it_returns(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher]
) -> None:
    # Its own watch ends with the folder; the watcher then watches the parent (where a
    # home that does not exist yet appears) and is alive again, and the home's return
    # (a backup extracted) calls back.
    alpha = make_home(tmp_path, "alpha")
    w = make_watcher("inotify")
    w.watch("alpha", alpha)
    w.start()
    assert w.alive
    shutil.rmtree(alpha)
    assert calls.wait_count("alpha", 1), "the home's removal never called back"
    deadline = time.monotonic() + WAIT
    while not w.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.alive
    before = calls.count("alpha")
    make_home(tmp_path, "alpha", "approvals: {mode: strict}\n")
    assert calls.wait_count("alpha", before + 1), "the home's return never called back"
    settle(alpha, calls, "alpha")


def _restore_by_swap(profiles: Path) -> None:
    backup = profiles.parent / "backup"
    shutil.copytree(profiles, backup)
    os.rename(profiles, profiles.parent / "profiles.old")
    subprocess.run(["cp", "-a", str(backup), str(profiles)], check=True)


def _restore_by_extract(profiles: Path) -> None:
    archive = profiles.parent / "backup.tgz"
    subprocess.run(["tar", "czf", str(archive), "-C", str(profiles.parent), "profiles"], check=True)
    shutil.rmtree(profiles)
    subprocess.run(["tar", "xzf", str(archive), "-C", str(profiles.parent)], check=True)


@pytest.mark.parametrize("restore", [_restore_by_swap, _restore_by_extract])
def test_a_restored_profiles_folder_is_followed(
    tmp_path: Path,
    calls: Calls,
    make_watcher: Callable[..., ConfigWatcher],
    restore: Callable[[Path], None],
) -> None:
    # The folder a watch follows is an inode: restored from a backup, the new folder is
    # watched instead of the old one (or none), every home is reloaded, and an edit
    # after the restore (a rule removed by hand) is seen.
    profiles = tmp_path / "profiles"
    homes = {name: make_home(profiles, name) for name in ("alpha", "beta")}
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\n")
    w = make_watcher("inotify")
    w.watch_many(homes)
    w.watch_supervisor(config, profiles)
    w.start()
    settle(homes["alpha"], calls, "alpha")
    before = {name: calls.count(name) for name in ("alpha", "beta")}
    restore(profiles)
    for name in ("alpha", "beta"):
        assert calls.wait_count(name, before[name] + 1), f"{name} was not reloaded"
    settle(homes["beta"], calls, "beta")  # the restored folder's own file
    deadline = time.monotonic() + WAIT  # (a watch of the folder gone may end a moment later)
    while not w.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.alive
    old = tmp_path / "profiles.old" / "alpha"
    if old.exists():  # the old folder is no longer followed
        quiet = calls.count("alpha")
        (old / "config.yaml").write_text("approvals: {mode: off}\n")
        settle(homes["beta"], calls, "beta")
        assert calls.count("alpha") == quiet


# --- resources and shutdown ---------------------------------------------------------


@pytest.mark.slow
def test_thousand_homes_use_one_inotify_instance(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher]
) -> None:
    root = tmp_path / "profiles"
    homes = [make_home(root, f"p{i:04d}") for i in range(1000)]
    before_fds, before_threads = inotify_instances(), threading.active_count()
    w = make_watcher("inotify")
    for home in homes:
        w.watch(home.name, home)
    w.start()
    assert inotify_instances() == before_fds + 1
    # watchdog 7 adds its own InotifyFD-Dispatcher thread: a handful in all, never one per home
    assert threading.active_count() - before_threads <= 6, [t.name for t in threading.enumerate()]
    edited = ["p0000", "p0421", "p0999"]
    for name in edited:
        save_sed_i(root / name)
    assert calls.wait_for(lambda names: set(edited) <= set(names))
    assert set(calls.names) == set(edited)
    w.stop()
    assert inotify_instances() == before_fds


@pytest.mark.parametrize("mode", [*MODES, "off"])
def test_stop_is_clean(tmp_path: Path, calls: Calls, mode: str) -> None:
    root = tmp_path / "profiles"
    alpha = make_home(root, "alpha")
    lone = make_home(tmp_path / "elsewhere", "lone")
    before = watcher_threads()
    w = ConfigWatcher(calls, mode=mode, debounce_ms=200, poll_interval=0.05)  # type: ignore[arg-type]
    w.watch("alpha", alpha)
    w.watch("beta", make_home(root, "beta"))
    w.watch("lone", lone)
    assert not w.alive
    w.start()
    assert w.alive
    assert w.mode == mode
    save_in_place(alpha)  # pending in the debounce window when stop() runs
    w.stop()
    w.stop()  # idempotent
    assert not w.alive
    assert watcher_threads() == before
    # Nothing is delivered after stop, whatever was pending.
    save_in_place(lone)
    w.start()  # a stopped watcher stays stopped
    assert watcher_threads() == before
    assert not calls.wait_for(bool, timeout=0.5)


def test_off_mode_never_calls_back(tmp_path: Path, calls: Calls) -> None:
    alpha = make_home(tmp_path, "alpha")
    w = ConfigWatcher(calls, mode="off")
    w.watch("alpha", alpha)
    w.start()
    try:
        assert w.mode == "off"
        assert w.alive  # idle by choice is ready (documented)
        save_in_place(alpha)
        assert not calls.wait_count("alpha", 1, timeout=0.3)
    finally:
        w.stop()


def test_auto_resolves_to_inotify_on_linux(calls: Calls) -> None:
    assert ConfigWatcher(calls).mode == "inotify"


@pytest.mark.parametrize(
    ("kw", "key"),
    [({"mode": "fsevents"}, "watch.mode"), ({"debounce_ms": -1}, "watch.debounce_ms")],
)
def test_bad_settings_are_config_errors(calls: Calls, kw: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        ConfigWatcher(calls, **kw)  # type: ignore[arg-type]
    assert err.value.key == key


# --- multiplex.yaml and the profiles folder (docs/operations.md#live-reconfiguration) ------

# vim's save and delete-then-recreate take config.yaml away for a moment: a home going.
KEEP_HOME_SAVES = [s for s in SAVES if s not in (save_vim_style, save_delete_recreate)]


@pytest.mark.parametrize("mode", MODES)
def test_an_edit_inside_a_served_home_never_rescans_the_folder(
    tmp_path: Path, calls: Calls, make_watcher: Callable[..., ConfigWatcher], mode: str
) -> None:
    """With 10,000 homes a rescan per edit made every revocation wait for it: only a
    home appearing or going, or multiplex.yaml itself, asks the supervisor to rescan."""
    from multiplex.watching import SUPERVISOR_KEY

    root = tmp_path / "profiles"
    homes = {name: make_home(root, name) for name in ("alpha", "beta")}
    config = tmp_path / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\n")
    w = make_watcher(mode)
    for name, home in homes.items():
        w.watch(name, home)
    w.watch_supervisor(config, root)
    w.start()
    settle(homes["beta"], calls, "beta")
    rescans = calls.count(SUPERVISOR_KEY)
    for save in KEEP_HOME_SAVES:
        save(homes["alpha"])
        settle(homes["beta"], calls, "beta")  # every event before it has been delivered
    assert calls.count("alpha") >= 1
    assert calls.count(SUPERVISOR_KEY) == rescans, calls.names
    make_home(root, "gamma")  # a home appears: rescan
    assert calls.wait_count(SUPERVISOR_KEY, rescans + 1)
    rescans = calls.count(SUPERVISOR_KEY)
    shutil.rmtree(homes["beta"])  # a home goes: rescan
    assert calls.wait_count(SUPERVISOR_KEY, rescans + 1)
    rescans = calls.count(SUPERVISOR_KEY)
    config.write_text("profiles_dir: profiles\ndefault_profile: alpha\n")
    assert calls.wait_count(SUPERVISOR_KEY, rescans + 1)
