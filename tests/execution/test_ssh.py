"""docs/execution.md#ssh: a real sshd on loopback with generated host and user keys (one per session)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution import OUTPUT_CAP
from tests.conftest import REPO


@dataclass(frozen=True)
class Sshd:
    port: int
    user_key: Path
    known_hosts_line: str
    root: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    binary = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(binary).exists() or shutil.which("ssh") is None or os.geteuid() != 0:
        pytest.skip("openssh-server/client not installed, or not root (sshd needs /run/sshd)")
    root = tmp_path_factory.mktemp("sshd")
    for name in ("host", "user"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / name)], check=True
        )
    (root / "authorized_keys").write_text((root / "user.pub").read_text())
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
    port = _free_port()
    config = root / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nPidFile {root / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
    )
    proc = subprocess.Popen(
        [binary, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    host_pub = (root / "host.pub").read_text().split()
    try:
        yield Sshd(port, root / "user", f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n", root)
    finally:
        proc.terminate()
        proc.wait(10)


def _with_cmdline(word: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if word in Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _gone(word: bytes) -> bool:
    deadline = time.monotonic() + 10
    while _with_cmdline(word) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _with_cmdline(word)


def _home(
    make_home,
    sshd: Sshd,
    name: str,
    extra: str = "",
    known: str | None = None,
    key: Path | None = None,
    port: int | None = None,
    timeout: int = 4,
):  # type: ignore[no-untyped-def]
    home = make_home(
        name,
        "terminal:\n  backend: ssh\n  host: 127.0.0.1\n"
        f"  port: {port or sshd.port}\n  user: root\n  identity_file: credentials/id_ed25519\n"
        "  known_hosts: known_hosts\n  cwd: /tmp\n"
        f"  timeout: {timeout}\n"
        '  env: {GREETING: hello-s, TRICKY: "it\'s $HOME; echo pwned"}\n'
        "  env_passthrough: [API_TOKEN]\n  credential_files: [credentials/token.txt]\n"
        f"{extra}approvals:\n  mode: off\n",
        env="API_TOKEN=token-s-0123456789\n",
        files={
            "known_hosts": sshd.known_hosts_line if known is None else known,
            "credentials/token.txt": "cred-s-abcdef123456\n",
        },
    )
    shutil.copy(key or sshd.user_key, home / "credentials/id_ed25519")
    os.chmod(home / "credentials/id_ed25519", 0o600)
    return home


@pytest.fixture
def sup(make_home, supervisor_of, sshd: Sshd, tmp_path: Path) -> Supervisor:  # type: ignore[no-untyped-def]
    _home(make_home, sshd, "s")
    return supervisor_of("profiles_dir: profiles\ndefault_profile: s\n")  # type: ignore[no-any-return]


def run(sup: Supervisor, command: str, profile: str = "s", run_id: str | None = None):  # type: ignore[no-untyped-def]
    return sup.run(command, profile=profile, context="cron", run_id=run_id)


def test_cwd_env_quoted_and_what_ran_it(sup: Supervisor) -> None:
    result = run(sup, 'pwd; echo "$GREETING"; echo "$TRICKY"; exit 3')
    assert result.exit_code == 3, result.stderr
    assert result.stdout.splitlines() == ["/tmp", "hello-s", "it's $HOME; echo pwned"]
    assert (result.backend, result.sandbox) == ("ssh", "ssh")


def test_credentials_in_a_private_remote_directory_removed_afterwards(sup: Supervisor) -> None:
    result = run(
        sup,
        'echo "$CREDENTIALS_DIRECTORY"; stat -c %a "$CREDENTIALS_DIRECTORY" '
        '"$CREDENTIALS_DIRECTORY/credentials/token.txt"; cat "$CREDENTIALS_DIRECTORY/credentials/token.txt"',
    )
    directory, dmode, fmode, content = result.stdout.splitlines()
    assert (dmode, fmode) == ("700", "400") and content.startswith("[REDACTED")
    assert not Path(directory).exists()  # the remote is this host: removed afterwards


def test_no_secret_in_any_remote_argv(sup: Supervisor) -> None:
    # Every process from the command up to sshd: none carries a value in its argv.
    walk = "p=$$; while [ \"$p\" -gt 1 ]; do tr '\\0' ' ' < /proc/$p/cmdline; echo; p=$(cut -d' ' -f4 /proc/$p/stat); done"
    result = run(sup, walk)
    assert "sshd" in result.stdout and "sh -s" in result.stdout
    assert "token-s-0123456789" not in result.stdout and "cred-s-abcdef" not in result.stdout
    assert "[REDACTED" not in result.stdout


def test_secrets_redacted_and_output_capped(sup: Supervisor) -> None:
    assert "token-s-0123456789" not in run(sup, 'echo "$API_TOKEN"').stdout
    big = run(sup, "head -c 3000000 /dev/zero | tr '\\0' x")
    assert big.truncated and len(big.stdout.encode()) == OUTPUT_CAP


def test_timeout_ends_the_remote_process_group(sup: Supervisor) -> None:
    result = run(sup, "sleep 41.5151 & sleep 42.5151")
    assert result.timed_out and result.exit_code is None
    assert _gone(b"41.5151") and _gone(b"42.5151")


def test_cancel_ends_the_remote_process_group(make_home, supervisor_of, sshd: Sshd) -> None:  # type: ignore[no-untyped-def]
    _home(make_home, sshd, "s", timeout=60)
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: s\n")
    box: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: box.update(r=run(sup, "sleep 43.5151", run_id="run-s"))
    )
    worker.start()
    deadline = time.monotonic() + 20
    while not _with_cmdline(b"43.5151") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _with_cmdline(b"43.5151")
    assert sup.cancel_commands("run-s") == 1
    worker.join(30)
    assert "[multiplex: cancelled]" in box["r"].stderr  # type: ignore[attr-defined]
    assert _gone(b"43.5151")


def test_unreachable_host_refused_key_unknown_host_key_are_one_line(
    make_home, supervisor_of, sshd: Sshd, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True
    )
    _home(make_home, sshd, "down", port=_free_port())  # nothing listens there
    _home(make_home, sshd, "wrongkey", key=tmp_path / "other")
    _home(make_home, sshd, "unknownhost", known="")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: down\n")
    for profile, said in (
        ("down", "Connection refused"),
        ("wrongkey", "Permission denied"),
        ("unknownhost", "Host key verification failed"),
    ):
        result = run(sup, "echo reached", profile)
        assert result.exit_code is None and "reached" not in result.stdout, profile
        assert said in result.stderr and "\n" not in result.stderr.strip(), result.stderr
        assert result.stderr.startswith("ssh root@127.0.0.1:")


def test_identity_file_linked_outside_the_home_is_refused(
    make_home, supervisor_of, sshd: Sshd, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    home = _home(make_home, sshd, "linked")
    outside = tmp_path / "outside_key"
    shutil.copy(sshd.user_key, outside)
    (home / "credentials/id_ed25519").unlink()
    (home / "credentials/id_ed25519").symlink_to(outside)
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: linked\n")
    result = run(sup, "echo reached", "linked")
    assert "reached" not in result.stdout and "identity_file" in result.stderr


def test_example_ops_answers_a_clear_connection_error(tmp_path: Path) -> None:
    shutil.copytree(REPO / "profiles", tmp_path / "profiles")
    shutil.copy(REPO / "multiplex.yaml", tmp_path / "multiplex.yaml")
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    try:
        with sup.turn("ops", "s", "api") as scope:
            from multiplex.execution import execute

            done = execute(scope, "systemctl status nginx")
    finally:
        sup.close()
    assert done.exit_code is None and done.error is not None
    assert done.stderr.startswith("ssh ") and "\n" not in done.stderr.strip(), done.stderr
