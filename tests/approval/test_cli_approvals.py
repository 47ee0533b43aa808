"""``multiplex approvals test``: pure, prints the steps, docs/cli.md JSON."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from tests.conftest import run_cli


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root`` with its content hash and mtime."""
    out: dict[str, tuple[str, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[str(path)] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                path.stat().st_mtime_ns,
            )
    return out


def test_approvals_test_json_and_purity(make_home, write_config, tmp_path) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "command_allowlist: ['git status']\napprovals:\n  deny: ['git push *']\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    before = snapshot(tmp_path)
    result = run_cli(
        "--config",
        str(config),
        "approvals",
        "test",
        "-p",
        "p",
        "--json",
        "--",
        "git push origin main",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {
        "schema_version",  # docs/cli.md#json-outputs
        "profile",
        "command",
        "outcome",
        "cause",
        "decided_by",
        "rule",
        "segments",
        "trace",
        "dangers",
    }
    assert data["dangers"] == []
    assert (
        data["outcome"] == "blocked"
        and data["rule"] == "git push *"
        and data["decided_by"] == "rule"
    )
    assert data["segments"] == [["git", "push", "origin", "main"]]
    assert all(set(step) == {"step", "result", "detail"} for step in data["trace"])
    text = run_cli(
        "--config",
        str(config),
        "approvals",
        "test",
        "-p",
        "p",
        "--context",
        "cron",
        "--",
        "rm",
        "-rf",
        "build",
    )
    assert text.returncode == 0
    assert "unattended" in text.stdout and "verdict:  blocked" in text.stdout
    assert snapshot(tmp_path) == before  # writes nothing, not even a log line


def test_approvals_test_unknown_profile_exit_2(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    result = run_cli("--config", str(config), "approvals", "test", "-p", "ghost", "--", "ls")
    assert result.returncode == 2
    assert (
        result.stderr.count("\n") == 1
        and "ghost" in result.stderr
        and "Traceback" not in result.stderr
    )


def test_exec_runs_and_refuses(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "command_allowlist: ['echo *']\napprovals:\n  deny: ['rm *']\n")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    ok = run_cli("--config", str(config), "exec", "-p", "p", "--", "echo", "hello")
    assert ok.returncode == 0 and ok.stdout == "hello\n"
    refused = run_cli("--config", str(config), "exec", "-p", "p", "--", "rm", "-f", "x")
    assert refused.returncode == 3 and "BLOCKED" in refused.stderr  # 3: blocked
    failing = run_cli("--config", str(config), "exec", "-p", "p", "--", "echo x; exit 7")
    # Nothing dangerous (manual mode approves it): it ran, so its own exit code.
    assert failing.returncode == 7 and failing.stdout == "x\n"


def test_exec_asks_on_the_terminal(make_home, write_config) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "")
    config = write_config("profiles_dir: profiles\ndefault_profile: p\n")
    yes = run_cli(
        "--config",
        str(config),
        "exec",
        "-p",
        "p",
        "--",
        "rm -rf ./no-such-dir && echo done",
        stdin="o\n",
    )
    assert (
        yes.returncode == 0
        and "done" in yes.stdout
        and "[o]nce [s]ession [a]lways [d]eny" in yes.stderr
    )
    # docs/approvals.md#what-a-prompt-shows: addressed to the person at the terminal, the
    # command, when and in what context it was asked, where it would run, in which
    # sandbox and network, and why it asks, once, in words.
    prompt = yes.stderr
    assert "The agent wants to run (profile p, session cli):" in prompt
    assert "    rm -rf ./no-such-dir && echo done\n" in prompt
    assert re.search(r"  Asked: +at \d\d:\d\d:\d\d \(context interactive\)\n", prompt)
    assert re.search(r"  Where: +\S+ \(local backend\)\n", prompt)
    assert re.search(
        r"  Runs in: +sandbox (bwrap|none); network: out through the egress proxy, any public host\n",
        prompt,
    )
    assert "  Why you are asked: recursive-delete: Deletes recursively or by force" in prompt
    assert prompt.count("recursive-delete") == 1  # the why, once
    assert "detection" not in prompt and "why:" not in prompt
    no = run_cli(
        "--config", str(config), "exec", "-p", "p", "--", "rm -rf ./no-such-dir", stdin="d\n"
    )
    assert no.returncode == 4  # 4: denied
    # The person who answered is told what happened, not what an agent should do next.
    assert "multiplex: denied (denied by user): the command did not run" in no.stderr
    assert "retry" not in no.stderr.lower() and "ask the user" not in no.stderr
    eof = run_cli(
        "--config", str(config), "exec", "-p", "p", "--", "rm -rf ./no-such-dir", stdin=""
    )
    assert eof.returncode == 5 and "not answered" in eof.stderr and "denied" not in eof.stderr
    # Answers read from a pipe are a script's: the records say stdin, never a terminal.
    records = (config.parent / "profiles/p/logs/decisions.jsonl").read_text().splitlines()
    answered = [json.loads(r) for r in records if '"choice"' in r and '"by"' in r]
    assert answered and {r["by"] for r in answered} == {"stdin"}
    assert "EOF" in eof.stderr
