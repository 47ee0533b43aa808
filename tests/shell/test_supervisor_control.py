"""The supervisor's own controls, reached from a command (docs/security.md#the-supervisors-own-controls).

Each hostile line was approved in the manual home before, and in the strict home
under its allow rules: the agent running the operator's CLI (which finds the
admin token where ``multiplex up`` wrote it, then answers its own prompts or adds
its own allow rules), writing ``multiplex.yaml`` or the state folder, reading the
admin token or the journal, and erasing its own decision log. The homes are
``<root>/profiles/{strict,manual}`` working in ``work/``; ``multiplex.yaml`` and
``.multiplex/`` are in ``<root>``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from multiplex import Supervisor
from tests.conftest import write_home
from tests.shell._carriers import APPROVED, assert_named, homes_fixture, outcome

sup = homes_fixture(
    "supervisor_control",
    ["multiplex *", "python3 *", "python *", "uvx *", "pipx *", "uv *", "bash *", "env *",
     "cat *", "tail *", "grep *", "ls *", "truncate *", "rm *", "mv *", "ln *", "cp *",
     "echo *", "tee *", "sed *", "pip *", ":*"],
)  # fmt: skip

ROOT = "../../.."  # from <root>/profiles/<name>/work

CLI = [
    "multiplex approvals answer 0a1b2c once",
    "multiplex allowlist add -p manual 'rm *'",
    "multiplex approvals list",
    "multiplex --help",
    "~/.local/bin/multiplex approvals answer 0a1b2c always",
    ".venv/bin/multiplex allowlist add -p strict 'curl *'",
    "/usr/local/bin/multiplex up --port 9999",
    "python3 -m multiplex approvals answer 0a1b2c once",
    "python -m multiplex.cli allowlist add -p manual 'rm *'",
    "python3 -mmultiplex approvals list",
    "uvx multiplex approvals list",
    "pipx run multiplex approvals list",
    "uv run multiplex approvals answer 0a1b2c once",
    "bash -c 'multiplex approvals answer 0a1b2c once'",
    "env MULTIPLEX_URL=http://127.0.0.1:8765 multiplex approvals answer 0a1b2c once",
    "echo y | multiplex exec -p strict -- cat .env",
]

WRITES = [
    f"echo 'default_profile: manual' >> {ROOT}/multiplex.yaml",
    f"sed -i 's/mode: strict/mode: off/' {ROOT}/multiplex.yaml",
    f"cp evil.yaml {ROOT}/multiplex.yaml",
    f"rm -f {ROOT}/.multiplex/journal/gateway.jsonl",
    f"echo token > {ROOT}/.multiplex/gateways/8765/admin-token",
    f"mv {ROOT}/.multiplex /tmp/gone",
    "truncate -s0 ../logs/decisions.jsonl",
    "rm ../logs/decisions.jsonl",
    "echo '{}' > ../logs/decisions.jsonl",
    ": > ../logs/cells.jsonl",
    "mv ../logs /tmp/x",
    "ln -sf /dev/null ../logs/decisions.jsonl",
    "rm ../logs/runs/r1.out",
    "cd .. && truncate -s0 logs/decisions.jsonl",
    "tee ../logs/decisions.jsonl < /dev/null",
]

READS = [
    f"cat {ROOT}/.multiplex/gateways/8765/admin-token",
    f"cat {ROOT}/.multiplex/gateways/*/admin-token",
    f"tail -f {ROOT}/.multiplex/journal/gateway.jsonl",
    f"grep -r token {ROOT}/.multiplex/",
]

EVERYDAY = [
    "pip install multiplex",
    "uv pip install multiplex",
    "grep -rn multiplex README.md",
    "cat logs/app.log",
    "echo hi > logs/out.txt",
    "truncate -s0 logs/test.log",
    "rm logs/old.log",
    "python3 script.py multiplex",
    "python3 -m pytest -q",
    f"cat {ROOT}/multiplex.yaml",
    f"ls {ROOT}",
    "cat ../config.yaml",
]


@pytest.mark.parametrize("line", CLI)
def test_the_supervisors_cli_is_never_run_unasked(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "supervisor-control", ("manual", "strict"))


@pytest.mark.parametrize("line", WRITES)
def test_its_config_state_and_this_profiles_records_are_never_written_unasked(
    sup: Supervisor, line: str
) -> None:
    assert_named(sup, line, "supervisor-control", ("manual", "strict"))


@pytest.mark.parametrize("line", READS)
def test_its_state_folder_is_a_secret(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "secret-read", ("manual", "strict"))


@pytest.mark.parametrize("line", EVERYDAY)
def test_everyday_siblings_stay_approved(sup: Supervisor, line: str) -> None:
    # (In the strict home a write through a redirection always asks: allowlist step.)
    for profile in ("manual",) if ">" in line else ("manual", "strict"):
        verdict = sup.test(profile, line, context="api")
        assert outcome(sup, profile, line) == APPROVED, (profile, verdict.cause)
        assert "supervisor-control" not in [d.pattern for d in verdict.dangers]


@pytest.fixture(scope="module")
def unprotected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
    """A manual home whose operator protects nothing (``approvals.protected_files: []``)."""
    root = tmp_path_factory.mktemp("unprotected")
    home = {"approvals": {"protected_files": []}, "terminal": {"cwd": "work"}}
    write_home(root / "profiles", "open", yaml.safe_dump(home), files={"work/x": "x\n"})
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    with Supervisor.from_config(root / "multiplex.yaml") as supervisor:
        yield supervisor


@pytest.mark.parametrize(
    "line",
    [
        "echo \"command_allowlist: ['*']\" >> ../config.yaml",
        "sed -i 's/mode: manual/mode: off/' ../config.yaml",
        "echo MULTIPLEX_TOKEN=known-to-the-agent-0123456789 >> ../.env",
        "cp my.env ../.env",
    ],
)
def test_this_profiles_config_and_env_are_kept_whatever_protected_files_says(
    unprotected: Supervisor, line: str
) -> None:
    verdict = unprotected.test("open", line, context="api")
    assert verdict.outcome.value == "ask", verdict.cause
    assert "supervisor-control" in [d.pattern for d in verdict.dangers]


@pytest.mark.parametrize("line", ["echo 'a: 1' > config.yaml", "cp sample.env .env"])
def test_a_projects_own_config_and_env_are_not(unprotected: Supervisor, line: str) -> None:
    verdict = unprotected.test("open", line, context="api")
    assert "supervisor-control" not in [d.pattern for d in verdict.dangers], verdict.cause
