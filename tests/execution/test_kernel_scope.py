"""docs/kernels.md#environment and #output: the profile's scope, frozen; output attributed, capped, redacted."""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.execution import OUTPUT_CAP
from multiplex.execution.sandbox._sandbox import bwrap_status
from tests.execution.conftest import A_CRED, A_TOKEN, B_SECRET, build_homes, dead, pid_of


def test_the_env_is_the_profiles_not_the_supervisors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MX_SUPERVISOR_ONLY", "leak-me")
    sup = Supervisor.from_config(build_homes(tmp_path))
    try:
        result = sup.execute_code(
            "import os, hashlib\n"
            # The proxy variables of docs/execution.md#egress (their port is the kernel's own).
            "env = {k: v for k, v in os.environ.items() if k != 'CREDENTIALS_DIRECTORY'"
            " and not k.lower().endswith('_proxy')}\n"
            "(os.getcwd(), sorted(env), hashlib.sha256(repr(sorted(env.items())).encode()).hexdigest(),"
            " sorted(k for k in os.environ if k.lower().endswith('_proxy')))",
            profile="a",
            session="env",
            context="cron",
        )
        assert result.outcome == "ok" and result.result is not None
        cwd, names, digest, proxies = ast.literal_eval(result.result)
        with sup.turn("a", "env", "cron") as scope:
            # docs/execution.md#the-sandbox: HOME inside is the home's workspace/.
            expected = {**scope.env, "HOME": str(sup.profiles["a"].home / "workspace")}
        assert cwd == str(sup.profiles["a"].home / "work")
        assert names == sorted(expected)
        names_of_proxies = ("http", "https", "all", "no")
        assert proxies == sorted(
            [
                *(f"{n}_proxy" for n in names_of_proxies),
                *(f"{n.upper()}_PROXY" for n in names_of_proxies),
            ]
        )
        # Exactly the scope's command env: nothing of the supervisor, nothing of the engine.
        assert digest == hashlib.sha256(repr(sorted(expected.items())).encode()).hexdigest()
        env = dict.fromkeys(names, "")
        assert "MX_SUPERVISOR_ONLY" not in env and "NOT_PASSED" not in env
        listing = sup.execute_code(
            "import os\nsorted(os.listdir(os.environ['CREDENTIALS_DIRECTORY'] + '/credentials'))",
            profile="a",
            session="env",
        )
        assert listing.result == "['token.txt']"
        # The host-side private copy the kernel's CREDENTIALS_DIRECTORY shows.
        (slot,) = sup.kernels.table(scope).slots.values()
        assert slot.process is not None and slot.process.creds is not None
        creds = str(slot.process.creds)
        assert (Path(creds) / "credentials" / "token.txt").read_text() == A_CRED + "\n"
        assert os.getcwd() != cwd and "GREETING" not in os.environ
        # The shell command a cell sends gets the very same env.
        shell = sup.execute_code(
            "from multiplex.kernel import run\nrun('echo $GREETING-$CREDENTIALS_DIRECTORY').stdout",
            profile="a",
            session="env",
            context="cron",
        )
        assert shell.result is not None and shell.result.startswith("'hello-a-/")
    finally:
        sup.close()
    assert not Path(creds).exists()  # the kernel's credential copy goes with it


BWRAP_WORKS, BWRAP_WHY = bwrap_status()


@pytest.mark.skipif(not BWRAP_WORKS, reason=f"bubblewrap unusable here: {BWRAP_WHY}")
def test_a_kernel_runs_in_its_profiles_sandbox(sup: Supervisor) -> None:
    other = sup.profiles["b"].home
    result = sup.execute_code(
        "import os\n"
        f"seen = os.path.exists({str(other / 'secret-b.txt')!r}), os.path.exists({str(other)!r})\n"
        "try:\n"
        "    open('/usr/mx-kernel-escape', 'w')\n"
        "    wrote = True\n"
        "except OSError:\n"
        "    wrote = False\n"
        "(os.getpid(), seen, wrote, os.environ['CREDENTIALS_DIRECTORY'],"
        " sorted(os.listdir('/run/credentials/credentials')))",
        profile="a",
        session="sandbox",
    )
    assert result.result == "(2, (False, False), False, '/run/credentials', ['token.txt'])"
    (row,) = [r for r in sup.kernels.kernels() if r["session"] == "sandbox"]
    assert row["sandbox"] == "bwrap"


def test_sandbox_none_runs_the_kernel_unconfined(tmp_path: Path) -> None:
    config = build_homes(tmp_path)
    (tmp_path / "profiles" / "b" / "config.yaml").write_text(
        "terminal:\n  cwd: /tmp\n  sandbox: none\n"
    )
    sup = Supervisor.from_config(config)
    try:
        result = sup.execute_code("import os\nos.getpid()", profile="b", session="plain")
        assert result.result == str(pid_of(sup, "b", "plain"))
        assert sup.kernels.kernels()[0]["sandbox"] == "none"
    finally:
        sup.close()


def test_secrets_in_output_are_redacted_with_other_profiles_values(sup: Supervisor) -> None:
    result = sup.execute_code(
        "import os, subprocess, sys\n"
        "print(os.environ['API_TOKEN'])\n"
        "subprocess.run(['echo', 'sub:' + os.environ['API_TOKEN']])\n"
        "subprocess.run(['sh', '-c', 'echo err:$API_TOKEN >&2'])\n"
        f"print({B_SECRET!r})\n"
        "open(os.environ['CREDENTIALS_DIRECTORY'] + '/credentials/token.txt').read()",
        profile="a",
        session="redact",
    )
    assert result.outcome == "ok"
    everything = result.stdout + result.stderr + str(result.result)
    for secret in (A_TOKEN, A_CRED, B_SECRET):
        assert secret not in everything
    # Subprocess output is the cell's. (In which order it comes beside the cell's own
    # print is the kernel's: it was once first, once second.)
    assert any(line.startswith("sub:") for line in result.stdout.splitlines())
    assert result.stderr.startswith("err:")
    failing = sup.execute_code(f"raise ValueError({A_TOKEN!r})", profile="a", session="redact")
    assert failing.error is not None
    assert A_TOKEN not in failing.error.evalue + failing.error.traceback


def test_output_is_capped(sup: Supervisor) -> None:
    result = sup.execute_code(
        f"import sys\nfor _ in range(5):\n    sys.stdout.write('x' * {OUTPUT_CAP // 2})\n'done'",
        profile="b",
        session="cap",
    )
    assert result.truncated and len(result.stdout) == OUTPUT_CAP and result.result == "'done'"


def test_output_of_a_later_cell_is_its_own(sup: Supervisor) -> None:
    first = sup.execute_code("print('first')", profile="b", session="attr")
    second = sup.execute_code("print('second')", profile="b", session="attr")
    assert first.stdout == "first\n" and second.stdout == "second\n"


def test_a_reload_that_changes_the_env_makes_the_kernel_stale(tmp_path: Path) -> None:
    sup = Supervisor.from_config(build_homes(tmp_path))
    try:
        sup.execute_code("kept = 1", profile="b", session="stale")
        pid = pid_of(sup, "b", "stale")
        config = sup.profiles["b"].home / "config.yaml"
        config.write_text("terminal:\n  cwd: /tmp\napprovals:\n  timeout: 60\n")
        sup.reload("b")
        same = sup.execute_code("kept", profile="b", session="stale")
        assert same.result == "1" and not same.fresh_kernel  # approvals only: still fresh enough
        config.write_text("terminal:\n  cwd: /tmp\n  env: {NEW_VAR: now}\n")
        sup.reload("b")
        fresh = sup.execute_code(
            "import os\n('kept' in dir(), os.environ.get('NEW_VAR'))", profile="b", session="stale"
        )
        assert fresh.result == "(False, 'now')" and fresh.fresh_kernel
        assert fresh.notice is not None and "changed since the last one started" in fresh.notice
        assert dead(pid)
    finally:
        sup.close()


def test_the_kernels_surface_is_per_profile(sup: Supervisor) -> None:
    from multiplex.scopes import SURFACES

    sup.execute_code("1", profile="b", session="surface")
    with sup.turn("b", "surface", "cron") as scope:
        rendered = SURFACES["kernels"].render(SURFACES["kernels"].resolve(scope))
    assert "b/surface" in rendered and all(label.startswith("b/") for label in rendered)
    with sup.turn("c", "surface", "cron") as scope:
        other = SURFACES["kernels"].render(SURFACES["kernels"].resolve(scope))
    assert all(label.startswith("c/") for label in other)
