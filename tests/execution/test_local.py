"""docs/execution.md#the-local-backend: cwd, env, credentials, timeout, caps, redaction, no leftovers.

Every test runs twice: in the bubblewrap sandbox and unsandboxed (the sub-reaper).
"""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest

from multiplex import Outcome, Supervisor
from multiplex.execution import OUTPUT_CAP, bwrap_status
from tests.execution.conftest import left_behind

SANDBOXES = [
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}"),
    ),
    "none",
]


@pytest.fixture(params=SANDBOXES)
def sandbox(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def marker() -> str:
    return f"MX_MARK_{uuid.uuid4().hex}"


@pytest.fixture
def sup(make_home, supervisor_of, sandbox: str, marker: str) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home(
        "a",
        f"terminal:\n  sandbox: {sandbox}\n  cwd: work\n"
        f"  env: {{GREETING: hello-a, {marker}: '1'}}\n  env_passthrough: [API_TOKEN]\n"
        "  credential_files: [credentials/token.txt, credentials/nested/key.json]\n  timeout: 2\n"
        "approvals:\n  mode: off\n",
        env="API_TOKEN=token-a-0123456789\nNOT_PASSED=zzz-hidden\n",
        files={
            "work/.keep": "",
            "credentials/token.txt": "cred-a-abcdef123456\n",
            "credentials/nested/key.json": '{"k": "v"}',
        },
    )
    make_home(
        "b",
        f"terminal:\n  sandbox: {sandbox}\n  cwd: /tmp\napprovals:\n  mode: off\n",
        env="B_SECRET=bsecret-value-424242\n",
    )
    make_home(
        "dock",
        "terminal:\n  backend: singularity\n  credential_files: [credentials/t.txt]\n",
        files={"credentials/t.txt": "docker-cred-value-1234"},
    )
    return supervisor_of("profiles_dir: profiles\ndefault_profile: a\n")  # type: ignore[no-any-return]


def run(sup: Supervisor, command: str, profile: str = "a", run_id: str | None = None):  # type: ignore[no-untyped-def]
    return sup.run(command, profile=profile, context="cron", run_id=run_id)


def test_cwd_and_env_are_the_scopes(sup: Supervisor, sandbox: str) -> None:
    process_cwd = os.getcwd()
    result = run(
        sup,
        'pwd; echo "$GREETING"; echo "${NOT_PASSED:-unset}"; echo "${PYTEST_CURRENT_TEST:-clean}"',
    )
    lines = result.stdout.splitlines()
    assert lines[0] == str(sup.profiles["a"].home / "work")
    assert lines[1:] == ["hello-a", "unset", "clean"]
    assert os.getcwd() == process_cwd and "GREETING" not in os.environ
    assert run(sup, "pwd", "b").stdout.strip() == "/tmp"
    assert (result.backend, result.sandbox) == ("local", sandbox)
    assert result.as_dict()["sandbox"] == sandbox


def test_credentials_directory_lifecycle(sup: Supervisor, sandbox: str) -> None:
    result = run(
        sup,
        'echo "$CREDENTIALS_DIRECTORY"; stat -c "%a" "$CREDENTIALS_DIRECTORY" '
        '"$CREDENTIALS_DIRECTORY/credentials/token.txt"; wc -c < "$CREDENTIALS_DIRECTORY/credentials/nested/key.json"',
    )
    directory, dir_mode, file_mode, content = result.stdout.splitlines()
    assert (dir_mode, file_mode, content.strip()) == ("700", "400", "10")
    if sandbox == "bwrap":
        assert directory == "/run/credentials"
    else:  # the profile's own folder, kept for its next run (tests/execution/test_credential_folder.py)
        assert run(sup, 'echo "$CREDENTIALS_DIRECTORY"').stdout.strip() == directory


def test_credentials_after_a_timeout(sup: Supervisor, sandbox: str) -> None:
    result = run(sup, 'echo "$CREDENTIALS_DIRECTORY"; sleep 30')
    assert result.timed_out and result.exit_code is None
    shown = run(sup, 'cat "$CREDENTIALS_DIRECTORY/credentials/token.txt"').stdout
    assert shown.startswith("[REDACTED")  # the next run has its credentials all the same


def test_timeout_kills_grandchildren(sup: Supervisor, marker: str) -> None:
    started = time.monotonic()
    result = run(sup, "bash -c 'sleep 60 & wait' ; sleep 60")
    assert result.timed_out and time.monotonic() - started < 20
    assert left_behind(marker) == []


@pytest.mark.parametrize(
    "spawn",
    [
        "setsid sleep 30 &",  # issue 11's example: its own session
        "( setsid sh -c 'sleep 30 &' & )",  # double fork out of a new session
        "nohup sleep 30 >/dev/null 2>&1 &",
        "setsid -f sleep 30",
    ],
)
def test_nothing_outlives_a_finished_run(sup: Supervisor, marker: str, spawn: str) -> None:
    result = run(sup, f"{spawn}\necho started")
    assert result.exit_code == 0 and "started" in result.stdout
    assert left_behind(marker) == []


def test_nothing_outlives_a_timeout(sup: Supervisor, marker: str) -> None:
    result = run(sup, "setsid sleep 25 & trap '' TERM; sleep 30")
    assert result.timed_out
    assert left_behind(marker) == []


def test_nothing_outlives_a_cancel(sup: Supervisor, marker: str) -> None:
    box: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: box.update(r=run(sup, "setsid sleep 30 & sleep 30", run_id="run-c"))
    )
    worker.start()
    deadline = time.monotonic() + 10
    while len(sup.processes) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sup.cancel_commands("run-c") == 1
    worker.join(10)
    result = box["r"]
    assert result.exit_code is None and "[multiplex: cancelled]" in result.stderr  # type: ignore[attr-defined]
    assert not result.timed_out  # type: ignore[attr-defined]
    assert left_behind(marker) == []


def test_shutdown_kill_leaves_nothing(sup: Supervisor, marker: str) -> None:
    worker = threading.Thread(target=lambda: run(sup, "setsid sleep 30 & sleep 30"))
    worker.start()
    deadline = time.monotonic() + 10
    while len(sup.processes) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sup.kill_running() == 1
    worker.join(10)
    assert left_behind(marker) == []


def test_the_command_holds_only_its_stdio(sup: Supervisor) -> None:
    # Nothing of the supervisor or the sub-reaper helper reaches the command: a
    # socket to the helper would let it start processes that outlive its run.
    result = run(sup, "ls /proc/$$/fd; true")  # "; true": bash forks ls, ls lists bash's fds
    assert result.stdout.split() == ["0", "1", "2"]


def test_exit_status_passes_through(sup: Supervisor) -> None:
    assert run(sup, "exit 7").exit_code == 7
    assert run(sup, "kill -9 $$").exit_code == 137


def test_output_is_capped(sup: Supervisor) -> None:
    result = run(sup, "head -c 3000000 /dev/zero | tr '\\0' x; echo done >&2")
    assert result.truncated and len(result.stdout.encode()) == OUTPUT_CAP
    assert "done" in result.stderr and result.exit_code == 0


def test_secret_printed_by_the_command_is_redacted(sup: Supervisor) -> None:
    result = run(
        sup,
        'echo "$API_TOKEN"; cat "$CREDENTIALS_DIRECTORY/credentials/token.txt"; echo bsecret-value-424242',
    )
    assert "token-a-0123456789" not in result.stdout and "cred-a-abcdef123456" not in result.stdout
    assert "bsecret-value-424242" not in result.stdout  # another profile's secret, always
    assert result.stdout.count("[REDACTED:") == 3


def test_unexecuted_backend_says_so_and_reports_the_mount_plan(sup: Supervisor) -> None:
    result = run(sup, "ls", "dock")
    assert result.decision.outcome is Outcome.APPROVED and result.exit_code is None
    assert "not executed" in result.stderr and result.sandbox is None
    assert result.backend == "singularity"
    assert result.mounts == (
        {
            "source": str(sup.profiles["dock"].home / "credentials/t.txt"),
            "target": "/run/credentials/credentials/t.txt",
        },
    )


def test_missing_cwd_is_reported_not_crashed(make_home, supervisor_of, sandbox: str) -> None:  # type: ignore[no-untyped-def]
    make_home(
        "x", f"terminal:\n  sandbox: {sandbox}\n  cwd: does-not-exist\napprovals:\n  mode: off\n"
    )
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: x\n")
    result = sup.run("true", profile="x", context="cron")
    assert result.exit_code is None and "working directory does not exist" in result.stderr
