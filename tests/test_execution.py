"""docs/execution.md: commands run in their scope: cwd, env, credentials, timeout, caps, redaction."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from multiplex import Outcome, Supervisor
from multiplex.execution import OUTPUT_CAP


@pytest.fixture
def sup(make_home, supervisor_of, tmp_path) -> Supervisor:  # type: ignore[no-untyped-def]
    make_home(
        "a",
        "terminal:\n  cwd: work\n  env: {GREETING: hello-a}\n  env_passthrough: [API_TOKEN]\n"
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
        "terminal:\n  cwd: /tmp\napprovals:\n  mode: off\n",
        env="B_SECRET=bsecret-value-424242\n",
    )
    make_home(
        "dock",
        "terminal:\n  backend: docker\n  credential_files: [credentials/t.txt]\n",
        files={"credentials/t.txt": "docker-cred-value-1234"},
    )
    return supervisor_of("profiles_dir: profiles\ndefault_profile: a\n")  # type: ignore[no-any-return]


def run(sup: Supervisor, command: str, profile: str = "a"):  # type: ignore[no-untyped-def]
    return sup.run(command, profile=profile, context="cron")


def test_cwd_and_env_are_the_scopes(sup: Supervisor) -> None:
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


def test_credentials_directory_lifecycle(sup: Supervisor) -> None:
    result = run(
        sup,
        'echo "$CREDENTIALS_DIRECTORY"; stat -c "%a" "$CREDENTIALS_DIRECTORY" '
        '"$CREDENTIALS_DIRECTORY/credentials/token.txt"; wc -c < "$CREDENTIALS_DIRECTORY/credentials/nested/key.json"',
    )
    directory, dir_mode, file_mode, content = result.stdout.splitlines()
    assert (dir_mode, file_mode, content.strip()) == (
        "700",
        "400",
        "10",
    )  # content itself is redacted
    assert not Path(directory).exists()  # removed afterwards


def test_credentials_removed_after_timeout(sup: Supervisor) -> None:
    result = run(sup, 'echo "$CREDENTIALS_DIRECTORY"; sleep 30')
    assert result.timed_out and result.exit_code is None
    assert not Path(result.stdout.strip()).exists()


def test_timeout_kills_grandchildren(sup: Supervisor, tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = run(sup, f"bash -c 'sleep 60 & echo $! > {marker}; wait' ; sleep 60")
    assert result.timed_out and time.monotonic() - started < 20
    pid = int(marker.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("grandchild survived the timeout")


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


def test_container_backend_reports_the_mount_plan(sup: Supervisor) -> None:
    result = run(sup, "ls", "dock")
    assert result.decision.outcome is Outcome.APPROVED and result.exit_code is None
    assert result.mounts == (
        {
            "source": str(sup.profiles["dock"].home / "credentials/t.txt"),
            "target": "/run/credentials/credentials/t.txt",
        },
    )


def test_missing_cwd_is_reported_not_crashed(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("x", "terminal:\n  cwd: does-not-exist\napprovals:\n  mode: off\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: x\n")
    result = sup.run("true", profile="x", context="cron")
    assert result.exit_code is None and "working directory does not exist" in result.stderr
