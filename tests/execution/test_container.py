"""docs/execution.md#containers: real podman containers on an image built offline from busybox-static."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution import OUTPUT_CAP, execute
from multiplex.execution._container import RUN_LABEL
from multiplex.execution._engine import Engine, engine_for
from multiplex.execution._images import ensure_image
from tests.conftest import REPO

IMAGE = "localhost/multiplex-busybox:pytest"


@pytest.fixture(scope="session")
def engine() -> Engine:
    """podman, answering, with the image built once per session (the same build the examples use)."""
    found = engine_for("podman")
    if isinstance(found, str):
        pytest.skip(found)
    why = ensure_image(found, IMAGE)
    if why is not None:
        pytest.skip(why)
    return found


def containers_of(engine: Engine, profile: str) -> list[str]:
    done = subprocess.run(
        [engine.binary, "ps", "-a", "--filter", f"label={RUN_LABEL}={profile}", "-q"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


@pytest.fixture
def sup(engine: Engine, make_home, supervisor_of, tmp_path: Path) -> Iterator[Supervisor]:  # type: ignore[no-untyped-def]
    (tmp_path / "data").mkdir()
    (tmp_path / "data/in.txt").write_text("host-data\n")
    name = f"c{tmp_path.name[-12:].replace('_', '')}"
    make_home(
        name,
        "terminal:\n  backend: docker\n  container_cli: podman\n"
        f"  image: {IMAGE}\n  cwd: /work\n  network: off\n  memory: 64m\n  cpus: 0.5\n"
        "  env: {GREETING: hello-c}\n  env_passthrough: [API_TOKEN]\n"
        "  credential_files: [credentials/token.txt]\n  timeout: 4\n"
        f"  host_mounts: ['{tmp_path / 'data'}:/data:ro']\n"
        "approvals:\n  mode: off\n",
        env="API_TOKEN=token-c-0123456789\n",
        files={"credentials/token.txt": "cred-c-abcdef123456\n"},
    )
    make_home(
        "b",
        "approvals:\n  mode: off\n",
        env="B_SECRET=bsecret-value-424242\n",
        files={"canary.txt": "CANARY-B-5150\n"},
    )
    built = supervisor_of(f"profiles_dir: profiles\ndefault_profile: {name}\n")
    built.name_c = name  # type: ignore[attr-defined]
    yield built
    assert containers_of(engine, name) == []  # after every test: nothing left


def run(sup: Supervisor, command: str, run_id: str | None = None):  # type: ignore[no-untyped-def]
    return sup.run(command, profile=sup.name_c, context="cron", run_id=run_id)  # type: ignore[attr-defined]


def test_cwd_env_and_what_ran_it(sup: Supervisor) -> None:
    result = run(sup, 'pwd; echo "$GREETING"; echo "${HOME:-nohome}"; cat /etc/passwd | head -1')
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["/work", "hello-c"]
    assert (result.backend, result.sandbox) == ("docker", "podman")


def test_credentials_at_run_credentials_and_nowhere_else(sup: Supervisor) -> None:
    home = sup.profiles[sup.name_c].home  # type: ignore[attr-defined]
    result = run(
        sup,
        'echo "$CREDENTIALS_DIRECTORY"; cat /run/credentials/credentials/token.txt; '
        f"cat {home}/credentials/token.txt; echo x > /run/credentials/credentials/token.txt",
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "/run/credentials" and lines[1].startswith("[REDACTED")
    assert "cred-c-abcdef123456" not in result.stdout
    assert "No such file" in result.stderr and "can't create /run/credentials" in result.stderr


def test_another_profiles_canary_is_unreadable(sup: Supervisor) -> None:
    b = sup.profiles["b"].home
    # Past the gate (which refuses naming another home): the container alone keeps it out.
    with sup.turn(sup.name_c, "raw", "api") as scope:  # type: ignore[attr-defined]
        result = execute(scope, f"cat {b / 'canary.txt'}; ls {b.parent}")
    assert "CANARY-B" not in result.stdout and "No such file" in result.stderr
    assert result.exit_code not in (0, None) and result.sandbox == "podman"


def test_secrets_are_redacted(sup: Supervisor) -> None:
    result = run(sup, 'echo "$API_TOKEN"; echo bsecret-value-424242')
    assert "token-c-0123456789" not in result.stdout and "bsecret" not in result.stdout
    assert result.stdout.count("[REDACTED:") == 2


def test_output_is_capped(sup: Supervisor) -> None:
    result = run(sup, "head -c 3000000 /dev/zero | tr '\\0' x; echo done >&2")
    assert result.truncated and len(result.stdout.encode()) == OUTPUT_CAP
    assert "done" in result.stderr


def test_host_mounts_memory_and_cpus(sup: Supervisor) -> None:
    result = run(
        sup,
        "cat /data/in.txt; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null "
        "|| cat /sys/fs/cgroup/memory.max; touch /data/new",
    )
    lines = result.stdout.splitlines()
    assert lines[:2] == ["host-data", str(64 * 1024 * 1024)]
    assert "Read-only file system" in result.stderr


def test_network_off_reaches_no_port_the_test_opened(sup: Supervisor) -> None:
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(4)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    try:
        result = run(
            sup,
            f"ip -o link | wc -l; nc -w 2 127.0.0.1 {port} </dev/null && echo CONNECTED; "
            f"nc -w 2 10.88.0.1 {port} </dev/null && echo CONNECTED",
        )
        assert result.stdout.splitlines()[0].strip() == "1"  # loopback only
        assert "CONNECTED" not in result.stdout
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()


def test_timeout_kills_and_removes_the_container(sup: Supervisor) -> None:
    started = time.monotonic()
    result = run(sup, "trap '' TERM; sleep 60")
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 40
    # the fixture checks that no container of the profile is left


def test_cancel_kills_and_removes_the_container(sup: Supervisor, engine: Engine) -> None:
    box: dict[str, object] = {}
    worker = threading.Thread(target=lambda: box.update(r=run(sup, "sleep 60", run_id="run-k")))
    worker.start()
    deadline = time.monotonic() + 60
    while not containers_of(engine, sup.name_c) and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.1)
    assert containers_of(engine, sup.name_c)  # type: ignore[attr-defined]
    assert sup.cancel_commands("run-k") == 1
    worker.join(60)
    assert "[multiplex: cancelled]" in box["r"].stderr  # type: ignore[attr-defined]


def test_missing_image_is_a_clear_error(make_home, supervisor_of, engine: Engine) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "n",
        "terminal:\n  backend: docker\n  image: localhost/nope:none\napprovals:\n  mode: off\n",
    )
    make_home("m", "terminal:\n  backend: docker\napprovals:\n  mode: off\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: n\n")
    result = sup.run("true", profile="n", context="cron")
    assert result.exit_code is None and "not present locally" in result.stderr
    assert "\n" not in result.stderr.strip() and result.sandbox is None
    missing = sup.run("true", profile="m", context="cron")
    assert "terminal.image is required" in missing.stderr


def test_example_ci_bot_runs_in_a_busybox_container(engine: Engine, tmp_path: Path) -> None:
    """The example home, as shipped (its image is built on first use)."""
    shutil.copytree(REPO / "profiles", tmp_path / "profiles")
    shutil.copy(REPO / "multiplex.yaml", tmp_path / "multiplex.yaml")
    sup = Supervisor.from_config(tmp_path / "multiplex.yaml")
    try:
        with sup.turn("ci-bot", "s", "api") as scope:
            done = execute(scope, "pwd; ls /run/credentials/credentials; busybox | head -1")
    finally:
        sup.close()
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["/workspace", "registry.json"]
    assert "BusyBox" in done.stdout and (done.backend, done.sandbox) == ("docker", "podman")


def test_network_on_is_the_profiles_namespace_and_its_proxy(
    make_home, supervisor_of, engine: Engine
) -> None:  # type: ignore[no-untyped-def]
    """docs/execution.md#egress: a container reaches no host port; out only through the proxy."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.3)
    port = server.getsockname()[1]
    make_home(
        "cn",
        f"terminal:\n  backend: docker\n  container_cli: podman\n  image: {IMAGE}\n"
        "  network: 'on'\napprovals:\n  mode: off\n",
    )
    sup = supervisor_of("profiles_dir: profiles\n")
    try:
        done = sup.run(
            f"env | grep -c _proxy=; nc -w 2 127.0.0.1 {port} </dev/null && echo DIRECT;"
            f" wget -q -O- http://127.0.0.1:{port}/ || echo REFUSED",
            profile="cn",
            context="cron",
        )
        assert done.stdout.splitlines()[0] == "4", done.stdout
        assert "DIRECT" not in done.stdout and "REFUSED" in done.stdout
        assert f"multiplex egress: refused 127.0.0.1:{port}" in done.stderr
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
