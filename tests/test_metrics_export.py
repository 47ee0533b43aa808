"""Only a supervisor that serves /metrics counts (docs/operations.md#metrics): a one-shot
CLI command's supervisor never imports prometheus_client, and ``up``'s does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from multiplex import Supervisor


def test_an_unexported_supervisor_counts_nothing_and_renders_nothing(tmp_path: Path) -> None:
    home = tmp_path / "p"
    home.mkdir()
    (home / "config.yaml").write_text("approvals: {mode: manual}\ncommand_allowlist: [ls]\n")
    with Supervisor.standalone(home, export_metrics=False) as sup:
        assert sup.test("p", "ls").outcome.value == "approved"
        assert sup.metrics.render() == b""
    with Supervisor.standalone(home) as sup:
        sup.test("p", "ls")
        assert b"multiplex_approval_decisions_total" in sup.metrics.render()


def test_cli_commands_other_than_up_never_import_prometheus(tmp_path: Path) -> None:
    home = tmp_path / "profiles" / "p"
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("approvals: {mode: manual}\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: p\n")
    probe = textwrap.dedent(f"""
        import sys
        from multiplex.cli._state import CliState
        state = CliState()
        state.config_option = {str(tmp_path / "multiplex.yaml")!r}
        for context in ("interactive", "cron"):
            state.supervisor(context=context).close()
            assert "prometheus_client" not in sys.modules, context
        state.supervisor(context="gateway").close()
        assert "prometheus_client" in sys.modules
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
