"""Real runs: nothing in the hardline corpus executes through ``multiplex exec``, in any mode.

Each line runs through the real CLI in a subprocess whose ``HOME`` is a scratch
folder holding a canary, with the profile's cwd inside it. Only lines whose
targets are that scratch home (``~``, ``$HOME``, ``.``, ``..``, ``*``) are run:
if the gate failed they would destroy the scratch folder, never the machine.
Global targets (``rm -rf /``, ``wipefs -a /dev/sda``, ``/proc/sysrq-trigger``)
are only ever decided, never run (tests/approval/test_fail_open_corpus.py).
The prompt is answered "once", so a line the gate wrongly asked about would run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_home

LINES = [
    "rm -rf ~",
    "coproc rm -rf ~; wait",
    "trap 'rm -rf ~' EXIT",
    "echo 'rm -rf ~' > >(sh)",
    "sh < <(echo 'rm -rf ~')",
    'bash -c "$(echo rm -rf ~)"',
    "xargs rm -rf <<< ~",
    "find ~ -delete",
    "rm -rf ..",
    "cd ~ && rm -rf *",
    "mv ~ ~/../gone",
    "GIT_PAGER='rm -rf ~' git log",
]
MODES = {
    "manual": "",
    "off": "approvals:\n  mode: off\n",
    "yolo": "approvals:\n  yolo: true\n",
    "allowlisted": "command_allowlist: ['rm *', 'sh *', 'bash *', 'find *', 'mv *', 'xargs *', "
    "'git *', 'cd *', 'coproc *', 'trap *', 'echo *', 'wait']\napprovals:\n  mode: strict\n",
}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("never-runs")
    for name, config in MODES.items():
        # Unsandboxed: the gate alone stands between the line and the scratch HOME (in
        # the sandbox `~` is the home's workspace/, which would hide a miss).
        write_home(root / "profiles", name, config + "terminal:\n  cwd: ~/work\n  sandbox: none\n")
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(MODES))
def test_no_hardline_line_runs(scratch: Path, mode: str) -> None:
    for line in ["echo ran > ~/work/control.txt", *LINES]:
        home = scratch / "homes" / mode / "home"
        (home / "work").mkdir(parents=True, exist_ok=True)
        (home / "canary.txt").write_text("alive\n")
        (home / "work" / "canary.txt").write_text("alive\n")
        env = {**os.environ, "HOME": str(home), "PWD": str(home / "work")}
        done = subprocess.run(
            [sys.executable, "-m", "multiplex", "--config", str(scratch / "multiplex.yaml"),
             "exec", "-p", mode, "--", line],
            input="o\n", capture_output=True, text=True, env=env, cwd=home / "work", timeout=120,
        )  # fmt: skip
        if line.startswith("echo ran"):  # the control: in this setup, exec really runs commands
            assert (home / "work" / "control.txt").read_text() == "ran\n", done.stderr
            continue
        assert (home / "canary.txt").read_text() == "alive\n", (mode, line, done.stderr)
        assert (home / "work" / "canary.txt").exists(), (mode, line, done.stderr)
        assert done.returncode == 3, (mode, line, done.returncode, done.stderr)
        assert "BLOCKED by policy" in done.stderr and "hardline" in done.stderr, done.stderr
