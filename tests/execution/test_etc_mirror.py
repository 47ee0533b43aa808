"""docs/execution.md#etc-in-the-sandbox: the copy of /etc a sandbox binds, used only in step.

Each test copies a made-up /etc (a folder of the test's) with the same code the
process's copy of the real /etc uses, and changes it as an operator or a package
upgrade would: every change is seen before the copy is used again.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import multiplex.execution.sandbox._etc_mirror as mirror_module
import multiplex.execution.sandbox._etc_sync as sync_module
from multiplex.execution import bwrap_status
from multiplex.execution.sandbox._etc_mirror import EtcMirror, etc_mirror
from multiplex.execution.sandbox._tmpfs import sweep_left_behind, tmpfs_root
from tests.tmpfs import fill, mounted_tmpfs

WAIT = 30.0


def _tree(root: Path) -> dict[str, tuple[str, str | int]]:
    """Each entry below ``root``: (kind, content or link target, mode) by relative path."""
    found: dict[str, tuple[str, str | int]] = {}
    for top, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(top) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("l", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("d", stat.S_IMODE(info.st_mode))
            elif not stat.S_ISREG(info.st_mode):
                found[rel] = ("?", stat.S_IMODE(info.st_mode))  # never opened: a pipe blocks
            else:
                found[rel] = ("f", f"{path.read_text()}|{stat.S_IMODE(info.st_mode):o}")
    return found


@pytest.fixture
def etc(tmp_path: Path) -> Path:
    source = tmp_path / "etc"
    (source / "ssh").mkdir(parents=True)
    (source / "apt/sources.list.d").mkdir(parents=True)
    (source / "private").mkdir(mode=0o700)
    (source / "hosts").write_text("127.0.0.1 localhost\n")
    (source / "apt/sources.list.d/debian.sources").write_text("Types: deb\n")
    (source / "ssh/ssh_config").write_text("Host *\n")
    (source / "ssh/ssh_host_rsa_key").write_text("HOST-KEY-CANARY\n")  # the fixed list
    (source / "shadow").write_text("root:SHADOW-CANARY:\n")  # the fixed list, even if 0644
    (source / "private/key").write_text("PRIVATE-CANARY\n")
    (source / "token").write_text("MODE-CANARY\n")
    (source / "token").chmod(0o600)  # not readable by all
    (source / "localtime").symlink_to("/usr/share/zoneinfo/UTC")
    (source / "passwd-link").symlink_to("shadow")  # a link is copied, never followed
    os.mkfifo(source / "initctl")
    for path in source.rglob("*"):
        if not path.is_symlink() and path.is_file() and path.name not in ("token",):
            path.chmod(0o644)
    return source


@pytest.fixture
def mirror(etc: Path, tmp_path: Path) -> Iterator[EtcMirror]:
    (tmp_path / "shm").mkdir(mode=0o700)
    made = EtcMirror(str(etc), str(tmp_path / "shm"))
    yield made
    made.close()


def _copy(mirror: EtcMirror) -> Path:
    assert mirror.copy is not None
    return Path(mirror.copy)


def _public(etc: Path) -> dict[str, tuple[str, str | int]]:
    """What the copy must hold: links; files readable by all and folders searchable by
    all, outside the fixed list; nothing below a folder left out."""
    fixed = ("shadow", "ssh/ssh_host_rsa_key")
    kept: dict[str, tuple[str, str | int]] = {}
    for rel, (kind, what) in sorted(_tree(etc).items()):
        if "/" in rel and rel.rsplit("/", 1)[0] not in kept:
            continue  # below a folder left out
        mode = (etc / rel).lstat().st_mode
        readable = mode & 0o004 and (kind != "d" or mode & 0o001)
        if kind == "l" or (kind in "df" and readable and rel not in fixed):
            kept[rel] = (kind, what)
    return kept


def test_a_process_that_makes_one_sandbox_copies_nothing(mirror: EtcMirror) -> None:
    """``multiplex exec`` runs one command: the blanks, and no copy made for nothing."""
    assert mirror.bind() is None
    time.sleep(0.3)
    assert mirror.copy is None
    assert mirror.bind() is None  # a second sandbox: the copy is made from now on
    assert mirror.wait_in_step(WAIT)


def test_the_copy_holds_every_public_entry_and_no_secret(etc: Path, mirror: EtcMirror) -> None:
    assert mirror.bind() is None  # not made yet: the caller binds the blanks meanwhile
    assert mirror.wait_in_step(WAIT)
    copy = _copy(mirror)
    assert mirror.bind() == ("--ro-bind", str(copy), "/etc")
    assert _tree(copy) == _public(etc)
    assert os.readlink(copy / "passwd-link") == "shadow" and not (copy / "shadow").exists()
    everything = "".join(p.read_text() for p in copy.rglob("*") if p.is_file())
    assert "CANARY" not in everything
    assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o700  # the folder around it is private


@pytest.mark.parametrize(
    "change",
    [
        "echo '10.0.0.1 db' >> hosts",  # written in place
        "printf 'Types: deb-src\\n' > apt/x && mv apt/x apt/sources.list.d/debian.sources",
        "chmod 600 hosts",  # made a secret: gone from the copy
        "rm ssh/ssh_config",
        "mkdir -p new/deep && echo fresh > new/deep/file",
        "ln -sfn /usr/share/zoneinfo/Europe/Paris localtime",
        "chmod 755 private && chmod 644 private/key",  # a secret folder made public
        "mv ssh ssh.old",
        "chmod 700 apt",  # a folder made private: its whole tree is gone
    ],
)
def test_a_change_is_seen_before_the_copy_is_used_again(
    etc: Path, mirror: EtcMirror, change: str
) -> None:
    assert mirror.wait_in_step(WAIT)
    subprocess.run(["sh", "-c", change], cwd=etc, check=True)
    # At once, with no wait: the watch reported it before the shell returned.
    assert mirror.bind() is None
    assert mirror.wait_in_step(WAIT)
    assert _tree(_copy(mirror)) == _public(etc)


def test_a_file_made_a_secret_leaves_a_running_sandboxs_view(etc: Path, mirror: EtcMirror) -> None:
    """The copy is brought in step in place: what a sandbox has bound changes with it."""
    assert mirror.wait_in_step(WAIT)
    seen = _copy(mirror) / "hosts"  # the path a running sandbox's /etc/hosts is
    (etc / "hosts").chmod(0o600)
    assert mirror.wait_in_step(WAIT)
    assert not seen.exists()


def test_the_copy_removed_is_made_again(mirror: EtcMirror, etc: Path) -> None:
    assert mirror.wait_in_step(WAIT)
    subprocess.run(["rm", "-rf", str(_copy(mirror))], check=True)
    assert mirror.bind() is None
    assert mirror.wait_in_step(WAIT)
    assert _tree(_copy(mirror)) == _public(etc)


def test_a_full_tmpfs_leaves_the_blanks_until_there_is_room(
    etc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(mirror_module, "_RETRY", 0.2)
    (etc / "big").write_bytes(b"x" * 256 * 1024)
    (etc / "big").chmod(0o644)
    with mounted_tmpfs(tmp_path / "small", "128k") as disk:
        made = EtcMirror(str(etc), str(disk))
        try:
            assert not made.wait_in_step(1.0)  # no room: never half a copy used
            assert "could not be brought in step" in caplog.text
            (etc / "big").unlink()
            assert made.wait_in_step(WAIT)
            assert _tree(_copy(made)) == _public(etc)
            ballast = fill(disk)
            (etc / "hosts").write_text("changed while the disk is full\n")
            assert not made.wait_in_step(1.0)
            ballast.unlink()
            assert made.wait_in_step(WAIT)
            assert (_copy(made) / "hosts").read_text() == "changed while the disk is full\n"
        finally:
            made.close()


def test_an_etc_past_its_bounds_is_never_copied(
    etc: Path, mirror: EtcMirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sync_module, "_MAX_BYTES", 16)
    assert not mirror.wait_in_step(1.0)
    assert mirror.bind() is None


def test_the_copy_goes_when_the_process_ends(etc: Path, tmp_path: Path) -> None:
    (tmp_path / "shm").mkdir(mode=0o700)
    script = textwrap.dedent(
        f"""
        from multiplex.execution.sandbox._etc_mirror import EtcMirror
        made = EtcMirror({str(etc)!r}, {str(tmp_path / "shm")!r})
        assert made.wait_in_step(30)
        print(made.copy, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    copy = Path(done.stdout.strip())
    assert copy.is_relative_to(tmp_path / "shm")
    assert not copy.exists() and list((tmp_path / "shm").iterdir()) == []


@pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")
def test_a_sandbox_that_may_write_the_tmpfs_cannot_reach_the_copy(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    """An operator names the tmpfs the copy lives on writable: the copy is not there."""
    shared = tmpfs_root()
    if shared is None:
        pytest.skip("no tmpfs for private folders here")
    make_home(
        "p",
        f"terminal:\n  sandbox: bwrap\n  writable_paths: [{shared}]\napprovals:\n  mode: 'off'\n",
    )
    sup = supervisor_of("profiles_dir: profiles\n")
    assert sup.run("true", profile="p", context="cron").exit_code == 0
    assert etc_mirror().wait_in_step(WAIT)
    copy = Path(etc_mirror().copy or "")
    attack = f"ls -A {copy.parent}; echo 1.2.3.4 evil >> {copy}/hosts; echo done"
    result = sup.run(attack, profile="p", context="cron")
    assert result.stdout.strip().endswith("done")
    assert "etc" not in result.stdout.split()
    assert "evil" not in (copy / "hosts").read_text()
    assert "evil" not in sup.run("cat /etc/hosts", profile="p", context="cron").stdout


def test_folders_a_killed_process_left_are_swept_by_the_next(etc: Path, tmp_path: Path) -> None:
    """``kill -9`` leaves the copy (and an unsandboxed profile's credential folder) on the
    tmpfs; the next process that makes one removes those of processes that are gone."""
    shm = tmp_path / "shm"
    shm.mkdir(mode=0o700)
    script = textwrap.dedent(
        f"""
        import time
        from multiplex.execution.sandbox._etc_mirror import EtcMirror
        made = EtcMirror({str(etc)!r}, {str(shm)!r})
        assert made.wait_in_step(30)
        print(made.copy, flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    left = Path(child.stdout.readline().strip()).parent
    os.kill(child.pid, signal.SIGKILL)
    child.wait(30)
    assert left.is_dir() and left.name.startswith(f"multiplex-etc-{child.pid}-")
    live = shm / f"multiplex-cred-p-{os.getppid()}-x1"  # a live process's (pytest's parent)
    live.mkdir()
    dead_cred = shm / f"multiplex-cred-my-home-{child.pid}-x2"
    (dead_cred / "sub").mkdir(parents=True)
    outside = tmp_path / "kept"
    outside.mkdir()
    (outside / "file").write_text("not ours to remove")
    link = shm / f"multiplex-etc-{child.pid}-x3"
    link.symlink_to(outside)
    other = shm / "multiplex-etc-notapid-x4"
    other.mkdir()
    sweep_left_behind.cache_clear()
    assert sweep_left_behind(str(shm)) == 3
    assert not left.exists() and not dead_cred.exists() and not link.is_symlink()
    assert live.is_dir() and other.is_dir() and (outside / "file").exists()
