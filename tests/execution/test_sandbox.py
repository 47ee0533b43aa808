"""docs/execution.md#the-sandbox: what the kernel enforces around a local command (real bwrap)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution import Execution, bwrap_status, execute, sandbox_argv, seccomp_fd
from multiplex.execution.sandbox._tmpfs import tmpfs_root as _credentials_root
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")


@pytest.fixture
def sup(make_home, supervisor_of, tmp_path: Path) -> Supervisor:  # type: ignore[no-untyped-def]
    (tmp_path / "shared").mkdir()
    (tmp_path / "outside").mkdir()
    make_home(
        "a",
        "terminal:\n  sandbox: bwrap\n  cwd: work\n"
        f"  writable_paths: [{tmp_path / 'shared'}]\n"
        "  credential_files: [credentials/token.txt]\n"
        "  network: off\napprovals:\n  mode: off\n",
        env="A_TOKEN=a-token-value-777777\n",
        files={
            "work/.keep": "",
            "credentials/token.txt": "cred-a-abcdef123456\n",
            "notes.txt": "x",
        },
    )
    make_home(
        "b",
        "terminal:\n  sandbox: bwrap\n  cwd: work\napprovals:\n  mode: off\n",
        env="B_SECRET=bsecret-value-424242\n",
        files={"work/.keep": "", "canary.txt": "CANARY-B-5150\n", "credentials/b.key": "bkey"},
    )
    make_home(
        "wide",  # a cwd above every home must not re-expose them
        f"terminal:\n  sandbox: bwrap\n  cwd: {tmp_path}\napprovals:\n  mode: off\n",
    )
    make_home(
        "net",
        "terminal:\n  sandbox: bwrap\n  network: host\napprovals:\n  mode: off\n",
    )
    return supervisor_of("profiles_dir: profiles\ndefault_profile: a\n")  # type: ignore[no-any-return]


def run(sup: Supervisor, command: str, profile: str = "a"):  # type: ignore[no-untyped-def]
    return sup.run(command, profile=profile, context="cron")


def raw(sup: Supervisor, command: str, profile: str = "a") -> Execution:
    """Past the gate (which refuses naming another home): what the kernel alone enforces."""
    with sup.turn(profile, "raw", "api") as scope:
        return execute(scope, command, hidden=sup.hidden_paths)


def test_another_profiles_home_is_unreadable(sup: Supervisor) -> None:
    b = sup.profiles["b"].home
    for profile in ("a", "wide"):
        result = raw(sup, f"cat {b / 'canary.txt'}; cat {b / '.env'}; ls {b.parent}", profile)
        assert "CANARY-B" not in result.stdout and "bsecret" not in result.stdout
        assert "No such file" in result.stderr and result.sandbox == "bwrap"
    # only the own home is under the profiles folder
    assert raw(sup, f"ls -A {b.parent}").stdout.split() == ["a"]


def test_supervisor_config_is_hidden(sup: Supervisor) -> None:
    config = sup.config.source
    assert config is not None and config.read_text()
    result = raw(sup, f"cat {config}", "wide")
    assert result.exit_code != 0 and "profiles_dir" not in result.stdout  # /dev/null, nodev


def test_writes_outside_writable_paths_fail(sup: Supervisor, tmp_path: Path) -> None:
    home = sup.profiles["a"].home
    targets = [home / "notes.txt", home / "new.txt", home / "config.yaml", tmp_path / "outside/x"]
    targets += [Path("/usr/local/multiplex-escape"), Path("/etc/multiplex-escape")]
    for target in targets:
        result = run(sup, f"echo pwned >> {target}")
        assert result.exit_code != 0, target
    assert (home / "notes.txt").read_text() == "x" and not (home / "new.txt").exists()
    assert not (tmp_path / "outside/x").exists() and not Path("/etc/multiplex-escape").exists()
    # what is writable: the cwd, the home's cache/, terminal.writable_paths
    ok = run(sup, f"echo 1 > made.txt && echo 2 > {home}/cache/c && echo 3 > {tmp_path}/shared/s")
    assert ok.exit_code == 0, ok.stderr
    assert (home / "work/made.txt").read_text() == "1\n"
    assert (home / "cache/c").read_text() == "2\n" and (tmp_path / "shared/s").read_text() == "3\n"


def test_root_cannot_remount_the_root_read_write(sup: Supervisor, tmp_path: Path) -> None:
    result = run(sup, f"mount -o remount,rw / ; echo x > {tmp_path}/outside/escape")
    assert result.exit_code != 0
    assert not (tmp_path / "outside/escape").exists()
    caps = run(sup, "grep CapEff /proc/self/status").stdout.split()
    assert caps[-1] == "0000000000000000"


def test_credentials_only_at_run_credentials(sup: Supervisor) -> None:
    home = sup.profiles["a"].home
    result = run(
        sup,
        'echo "$CREDENTIALS_DIRECTORY"; cat /run/credentials/credentials/token.txt; '
        f"cat {home}/credentials/token.txt; cat {home}/.env; ls /tmp | grep -c multiplex-cred",
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "/run/credentials"
    assert lines[1].startswith("[REDACTED")  # readable there (and masked in the output)
    assert lines[2:] == ["0"]  # the home's copy and .env are not readable, no host copy in /tmp
    # write to the credentials: refused
    assert run(sup, "echo x > /run/credentials/credentials/token.txt").exit_code != 0


def test_credentials_have_no_copy_on_the_hosts_disk(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    # docs/execution.md#the-sandbox: bwrap gets each file's bytes in a memfd and
    # copies them into the sandbox's own /run; no multiplex-cred-* folder is made.
    name = f"cred{uuid.uuid4().hex[:12]}"  # other processes' runs make folders too
    make_home(
        name,
        "terminal:\n  sandbox: bwrap\n  credential_files: [credentials/token.txt]\n"
        "  network: off\napprovals:\n  mode: off\n",
        files={"credentials/token.txt": "cred-x-abcdef123456\n"},
    )
    sup = supervisor_of("profiles_dir: profiles\n")
    roots = {Path(tempfile.gettempdir()), Path(_credentials_root() or tempfile.gettempdir())}
    seen: set[Path] = set()
    running = threading.Event()

    def watch() -> None:
        while not running.is_set():
            for root in roots:
                seen.update(root.glob(f"multiplex-cred-{name}-*"))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = run(sup, "cat /run/credentials/credentials/token.txt; sleep 1", name)
    finally:
        running.set()
        watcher.join()
    assert result.stdout.startswith("[REDACTED") and result.exit_code == 0
    assert seen == set()


def test_tmp_run_and_var_tmp_are_fresh_and_private_to_each_sandbox(sup: Supervisor) -> None:
    # docs/execution.md#the-sandbox: empty folders of the sandbox's own root
    # (no mount of their own); what a command leaves there is gone with it.
    mark = f"left-{uuid.uuid4().hex[:12]}"
    first = run(sup, f"ls -A /var/tmp; for d in /tmp /run /var/tmp; do echo x > $d/{mark}; done")
    assert first.exit_code == 0, first.stderr
    assert first.stdout == ""  # nothing of the host's /var/tmp
    again = run(sup, f"ls -A /tmp /run /var/tmp | grep -c {mark}; stat -c %a /tmp /var/tmp")
    assert again.stdout.split() == ["0", "755", "755"]
    assert not (Path(tempfile.gettempdir()) / mark).exists()
    assert not Path("/var/tmp", mark).exists() and not Path("/run", mark).exists()


def test_new_pid_namespace(sup: Supervisor) -> None:
    result = run(sup, "echo $$; ls /proc | grep -c '^[0-9]'")
    pid, count = result.stdout.split()
    assert int(pid) <= 3 and int(count) <= 4  # bwrap is PID 1; nothing of the host is visible


def test_network_off_reaches_no_loopback_port(sup: Supervisor, loopback_listener) -> None:  # type: ignore[no-untyped-def]
    server, port = loopback_listener
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED"
    blocked = run(sup, probe)
    assert "CONNECTED" not in blocked.stdout and blocked.exit_code != 0
    with pytest.raises(socket.timeout):
        server.accept()
    allowed = run(sup, probe, "net")
    assert "CONNECTED" in allowed.stdout, allowed.stderr
    conn, _ = server.accept()
    conn.close()


def test_sandbox_argv_is_reusable_for_other_processes(sup: Supervisor) -> None:
    """Kernels and other long-lived processes start inside the same sandbox."""
    floor = seccomp_fd()
    try:
        with sup.turn("a", "s", "api") as scope:
            prefix = sandbox_argv(scope, hidden=sup.hidden_paths, seccomp=floor)
        b = sup.profiles["b"].home
        done = subprocess.run(
            [*prefix, sys.executable, "-I", "-c", f"open({str(b / 'canary.txt')!r}).read()"],
            capture_output=True,
            text=True,
            check=False,
            pass_fds=(floor,),
        )
    finally:
        os.close(floor)
    assert done.returncode != 0 and "FileNotFoundError" in done.stderr


def test_standalone_exec_is_sandboxed_too(sup: Supervisor, tmp_path: Path) -> None:
    b = sup.profiles["b"].home
    env = {**os.environ, "MULTIPLEX_CONFIG": str(tmp_path / "multiplex.yaml")}

    def run(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "multiplex", "exec", "-p", "a", line],
            capture_output=True, text=True, check=False, cwd=REPO, env=env, timeout=60,
        )  # fmt: skip

    # Served alone, profile a still knows b's home from multiplex.yaml: the gate blocks.
    named = run(f"cat {b / 'canary.txt'}; echo $$")
    assert named.returncode == 3 and "another profile's home" in named.stderr, named.stderr
    # A path the gate cannot read (from a file, when the line runs): the sandbox hides b.
    (sup.profiles["a"].home / "work" / "where.txt").write_text(str(b))
    done = run('cat "$(cat where.txt)/canary.txt"; echo $$')
    assert "CANARY-B" not in done.stdout
    assert "No such file" in done.stdout + done.stderr, done.stdout + done.stderr


def test_auto_without_bwrap_warns_and_runs_unsandboxed(
    make_home, supervisor_of, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    make_home("u", "terminal:\n  sandbox: auto\napprovals:\n  mode: off\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\n")
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "multiplex",
            "--config",
            str(tmp_path / "multiplex.yaml"),
            "profiles",
            "show",
            "u",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=env,
        timeout=60,
    )
    assert "unsandboxed" in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_profiles_first_commands_at_once_all_run(sup: Supervisor) -> None:
    """Two first commands both find cache/ missing: each makes it or finds it made."""
    home = sup.profiles["a"].home
    failures: list[BaseException] = []
    for _ in range(300):
        shutil.rmtree(home / "cache", ignore_errors=True)
        barrier = threading.Barrier(8)

        def first(barrier: threading.Barrier = barrier) -> None:
            try:
                with sup.turn("a", "first", "api") as scope:
                    barrier.wait()
                    sandbox_argv(scope, hidden=sup.hidden_paths, seccomp=0)
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=first) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failures, failures[0]
    assert (home / "cache").is_dir()


@pytest.mark.parametrize("target", ["outside", "missing"])
def test_a_symlinked_cache_is_never_bound_and_never_stops_the_profile(
    sup: Supervisor, tmp_path: Path, target: str
) -> None:
    """An agent that makes cache/ a link (to a host folder, or to nothing) neither
    writes through it nor keeps the profile's next commands from running."""
    home = sup.profiles["a"].home
    shutil.rmtree(home / "cache", ignore_errors=True)
    (home / "cache").symlink_to(tmp_path / target)
    done = run(sup, f"echo ok; echo leak > {home}/cache/f")
    assert done.stdout.startswith("ok")
    assert done.exit_code != 0
    assert not (tmp_path / "outside" / "f").exists()


def test_a_link_made_inside_a_writable_folder_never_becomes_a_bind(
    make_home,  # type: ignore[no-untyped-def]
    supervisor_of,
    tmp_path: Path,
) -> None:
    """An agent that may write a folder holding its cwd (or another writable path)
    replaces that name with a link to a host folder: its next command must still
    not write there (a bind made from the host would follow the link)."""
    shared, other = tmp_path / "shared", tmp_path / "other"
    (shared / "proj").mkdir(parents=True)
    (other / "sub").mkdir(parents=True)
    for name in ("outside", "elsewhere"):
        (tmp_path / name).mkdir()
    make_home(
        "a",
        "terminal:\n  sandbox: bwrap\n"
        f"  cwd: {shared / 'proj'}\n"
        f"  writable_paths: [{shared}, {other / 'sub'}, {other}]\n"
        "approvals:\n  mode: off\n",
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: a\n")

    def run_a(command: str):  # type: ignore[no-untyped-def]
        return sup.run(command, profile="a", context="cron")

    assert run_a("pwd").stdout.strip() == str(shared / "proj")
    assert run_a(f"echo in > {other / 'sub' / 'f'} && echo ok").stdout.strip() == "ok"
    assert (other / "sub" / "f").read_text() == "in\n"
    swap = (
        f"cd {tmp_path} && rm -rf shared/proj other/sub"
        f" && ln -s {tmp_path / 'outside'} shared/proj && ln -s {tmp_path / 'elsewhere'} other/sub"
    )
    assert run_a(swap).exit_code == 0, run_a(swap).stderr
    run_a(f"echo pwned > pwned.txt; echo pwned > {other / 'sub' / 'x'}; pwd")
    assert not list((tmp_path / "outside").iterdir())
    assert not list((tmp_path / "elsewhere").iterdir())


def test_a_link_made_above_the_cwd_or_behind_a_dotted_path_never_becomes_a_bind(
    make_home,  # type: ignore[no-untyped-def]
    supervisor_of,
    tmp_path: Path,
) -> None:
    """The same agent, one level up: it replaces a parent of its cwd, or the folder a
    ``..`` spelling of a writable path passes through, with a link to a host folder."""
    shared = tmp_path / "shared"
    (shared / "a" / "b").mkdir(parents=True)
    (shared / "c" / "d").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    make_home(
        "a",
        "terminal:\n  sandbox: bwrap\n"
        f"  cwd: {shared / 'a' / 'b'}\n"
        f"  writable_paths: [{shared}, {shared / 'a' / '..' / 'c' / 'd'}]\n"
        "approvals:\n  mode: off\n",
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: a\n")

    def run_a(command: str):  # type: ignore[no-untyped-def]
        return sup.run(command, profile="a", context="cron")

    assert run_a("pwd").stdout.strip() == str(shared / "a" / "b")
    outside = tmp_path / "outside"
    (outside / "b").mkdir()
    (outside / "d").mkdir()
    above = f"cd {shared} && rm -rf a && ln -s {outside} a && echo swapped"
    assert run_a(above).stdout.strip() == "swapped"
    run_a(f"cd {shared} && rm -rf c && ln -s {outside} c")  # d may be busy: bound on its own
    run_a(f"echo pwned > pwned.txt; echo pwned > {shared / 'c' / 'd' / 'x'}")
    assert [p.name for p in outside.rglob("*") if p.is_file()] == []
