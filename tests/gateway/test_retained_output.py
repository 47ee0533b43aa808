"""docs/operations.md#finished-output on a real gateway: finished runs' output is bounded.

With ``gateway.retained_output_bytes`` at 1 MiB and runs printing ~300 KiB:

- the output the registry counts in memory never passes the bound, the rest is
  in ``<home>/logs/runs/<run_id>.json`` (0600, redacted) and ``GET
  /v1/runs/{id}`` serves it byte for byte, also after a restart (the journal);
- a profile that floods gives up its own output, never another's fair share;
- rotation removes the oldest files and their runs say so;
- on a full filesystem (a real tmpfs) the output is dropped with the OSError,
  the run document stays and the gateway goes on;
- a sandboxed command cannot read ``logs/runs/``;
- a bound out of range is refused at load, naming the file and key.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from multiplex import ConfigError, Supervisor
from multiplex.execution import bwrap_status
from multiplex.gateway import GatewayServer
from multiplex.supervision import load_supervisor_config
from tests.conftest import run_cli, write_home
from tests.gateway.conftest import ADMIN, Api
from tests.tmpfs import mounted_tmpfs

BOUND = 1024 * 1024
ALPHA_TOKEN = "alpha-token-for-retained-output-71c2"
BETA_TOKEN = "beta-token-for-retained-output-93d4"
OPEN = """\
    terminal:
      cwd: .
      timeout: 60
    approvals:
      mode: "off"
"""
UNSANDBOXED = """\
    terminal:
      cwd: .
      sandbox: none
    approvals:
      mode: "off"
"""
NUMBERS = 44_000  # `seq S S+44000` with 6-digit S: 44 001 lines of 7 bytes, ~300 KiB


def _printed(start: int) -> str:
    return "".join(f"{n}\n" for n in range(start, start + NUMBERS + 1))


def _command(start: int) -> str:
    return f"seq {start} {start + NUMBERS}"


@dataclass
class Served:
    root: Path
    sup: Supervisor
    server: GatewayServer
    api: Api
    homes: dict[str, Path]

    @property
    def retained(self) -> Any:
        return self.server.gateway.retained

    def stop(self) -> None:
        self.server.stop()
        self.sup.close()


def _project(root: Path) -> dict[str, Path]:
    profiles = root / "profiles"
    homes = {
        "alpha": write_home(profiles, "alpha", OPEN, f"MULTIPLEX_TOKEN={ALPHA_TOKEN}\n"),
        "beta": write_home(profiles, "beta", OPEN, f"MULTIPLEX_TOKEN={BETA_TOKEN}\n"),
    }
    (root / "multiplex.yaml").write_text(
        "profiles_dir: profiles\ndefault_profile: alpha\n"
        "watch: {mode: polling, debounce_ms: 20}\n"
        f"gateway: {{retained_output_bytes: {BOUND}}}\n"
    )
    return homes


def _serve(root: Path, homes: dict[str, Path]) -> Served:
    sup = Supervisor.from_config(root / "multiplex.yaml")
    sup.start()
    server = GatewayServer(sup, admin_token=ADMIN, host="127.0.0.1", port=0, grace=5.0).start()
    return Served(root, sup, server, Api(server.url.rstrip("/"), ADMIN), homes)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = _serve(tmp_path, _project(tmp_path))
    try:
        yield s
    finally:
        s.stop()


def _run(s: Served, profile: str, *commands: str) -> dict[str, Any]:
    done = s.api.wait(s.api.submit(list(commands), profile=profile), timeout=60)
    assert done["status"] == "completed", json.dumps(done)[:2000]
    # A client sees the run final a moment before the registry has counted it:
    # its own `done` is set after the count.
    run = s.server.gateway.runs.get(done["run_id"])
    assert run is not None and run.done.wait(10)
    # The registry's own count, after every run: never past the bound.
    assert s.retained.total <= BOUND, s.retained.held()
    return done


def _spilled(home: Path) -> set[str]:
    folder = home / "logs/runs"
    return {p.stem for p in folder.glob("*.json")} if folder.is_dir() else set()


def test_output_past_the_bound_is_served_from_the_logs_folder_identically(
    served: Served,
) -> None:
    starts = [100_000 + 50_000 * n for n in range(8)]
    ids = [_run(served, "alpha", _command(start))["run_id"] for start in starts]
    on_disk = _spilled(served.homes["alpha"])
    # ~2.4 MB printed under a 1 MiB bound: the oldest moved out, the newest held.
    assert ids[0] in on_disk and ids[-1] not in on_disk and len(on_disk) >= 5
    assert 0 < served.retained.held()["alpha"] <= BOUND
    for run_id, start in zip(ids, starts, strict=True):
        result = served.api.run(run_id)["results"][0]
        assert result["stdout"] == _printed(start), run_id
        assert result["stderr"] == "" and result["output_dropped"] is None
        assert result["exit_code"] == 0 and result["command"] == _command(start)
    path = served.homes["alpha"] / f"logs/runs/{ids[0]}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    # In memory the moved results hold no output, and say where it is.
    run = served.server.gateway.runs.get(ids[0])
    assert run.results[0]["stdout"] is None and "logs/runs/" in run.results[0]["output_dropped"]

    # After a restart the journal's documents and the files serve the same, in the same order.
    listed = [r["run_id"] for r in served.api.get("/v1/runs").json()]
    served.stop()
    again = _serve(served.root, served.homes)
    try:
        assert again.retained.total <= BOUND
        for run_id, start in zip(ids, starts, strict=True):
            assert again.api.run(run_id)["results"][0]["stdout"] == _printed(start), run_id
        assert [r["run_id"] for r in again.api.get("/v1/runs").json()] == listed
        # The compacted journal holds the moved runs' documents without their output.
        journal = (served.root / ".multiplex/journal/gateway.jsonl").read_text()
        assert json.dumps(_printed(starts[0]))[1:200] not in journal
        assert json.dumps(_printed(starts[-1]))[1:200] in journal  # held: in the journal
    finally:
        again.stop()


def test_a_flooding_profile_does_not_push_out_another_profiles_share(served: Served) -> None:
    quiet = _run(served, "beta", _command(900_000))["run_id"]
    for n in range(8):
        _run(served, "alpha", _command(100_000 + n))
    held = served.retained.held()
    assert held["beta"] == len(_printed(900_000))  # under its fair share (half): kept
    assert quiet not in _spilled(served.homes["beta"]) and _spilled(served.homes["alpha"])
    assert not served.retained.spilled(served.server.gateway.runs.get(quiet))
    assert served.api.run(quiet)["results"][0]["stdout"] == _printed(900_000)


def test_rotation_removes_the_oldest_files_and_says_so(served: Served) -> None:
    # logs/runs/ keeps 4 × the bound per profile: 4 MiB, about 13 such runs.
    ids = [_run(served, "alpha", _command(100_000 + n))["run_id"] for n in range(18)]
    folder = served.homes["alpha"] / "logs/runs"
    on_disk = _spilled(served.homes["alpha"])
    assert ids[0] not in on_disk and ids[-4] in on_disk  # the last 3 are held in memory
    assert sum(p.stat().st_size for p in folder.glob("*.json")) <= 4 * BOUND
    oldest = served.api.run(ids[0])
    result = oldest["results"][0]
    assert oldest["status"] == "completed" and result["exit_code"] == 0
    assert result["stdout"] is None and result["stderr"] is None
    assert result["output_dropped"].startswith("rotated away: logs/runs/ keeps"), result
    newest_spilled = sorted(on_disk & set(ids), key=ids.index)[-1]
    start = 100_000 + ids.index(newest_spilled)
    assert served.api.run(newest_spilled)["results"][0]["stdout"] == _printed(start)
    # The operator's view: `multiplex runs show` says so too.
    env = {"MULTIPLEX_URL": served.api.base, "MULTIPLEX_TOKEN": ADMIN, "PATH": os.environ["PATH"]}
    shown = run_cli("runs", "show", ids[0], env=env, replace_env=True)
    assert shown.returncode == 0, shown.stderr
    assert f"output: {result['output_dropped']}" in shown.stdout


def test_a_full_logs_filesystem_drops_the_output_with_the_error(tmp_path: Path) -> None:
    homes = _project(tmp_path)
    with mounted_tmpfs(homes["alpha"] / "logs/runs", "128k"):
        s = _serve(tmp_path, homes)
        try:
            ids = [_run(s, "alpha", _command(100_000 + n))["run_id"] for n in range(5)]
            dropped = s.api.run(ids[0])
            result = dropped["results"][0]
            assert dropped["status"] == "completed" and result["exit_code"] == 0
            assert result["stdout"] is None
            why = result["output_dropped"]
            assert why == (
                f"dropped: logs/runs/{ids[0]}.json could not be written: No space left on device"
            )
            assert not list((homes["alpha"] / "logs/runs").iterdir())  # no temp file left
            # The gateway goes on, and the newest output is still held.
            assert _run(s, "alpha", "seq 1 3")["results"][0]["stdout"] == "1\n2\n3\n"
            assert s.api.run(ids[-1])["results"][0]["stdout"] == _printed(100_004)
        finally:
            s.stop()


def test_a_secret_in_the_output_stays_redacted_in_the_file(served: Served) -> None:
    first = _run(served, "alpha", f"echo ok {ALPHA_TOKEN}", _command(100_000))["run_id"]
    for n in range(4):
        _run(served, "alpha", _command(200_000 + n))
    path = served.homes["alpha"] / f"logs/runs/{first}.json"
    text = path.read_text()
    assert ALPHA_TOKEN not in text and "[REDACTED" in text
    assert json.loads(text)["run_id"] == first
    served_back = served.api.run(first)["results"]
    assert "[REDACTED" in served_back[0]["stdout"] and ALPHA_TOKEN not in served_back[0]["stdout"]
    assert served_back[1]["stdout"] == _printed(100_000)


@pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")
def test_a_sandboxed_command_cannot_read_the_moved_output(tmp_path: Path) -> None:
    homes = _project(tmp_path)
    homes["plain"] = write_home(tmp_path / "profiles", "plain", UNSANDBOXED)
    s = _serve(tmp_path, homes)
    try:
        first = {name: _run(s, name, _command(100_000))["run_id"] for name in ("alpha", "plain")}
        for n in range(4):
            _run(s, "alpha", _command(200_000 + n))
            _run(s, "plain", _command(200_000 + n))
        assert first["alpha"] in _spilled(homes["alpha"])
        assert first["plain"] in _spilled(homes["plain"])
        # The control: without a sandbox a profile reads its own (so the test can fail);
        # the cwd is the home's workspace/
        mine = f"ls ../logs/runs; cat ../logs/runs/{first['plain']}.json"
        control = _run(s, "plain", mine)["results"][0]
        assert first["plain"] in control["stdout"] and "100000" in control["stdout"], control[
            "stderr"
        ]
        peek = f"ls ../logs/runs; cat ../logs/runs/{first['alpha']}.json"
        done = s.api.wait(s.api.submit([peek], profile="alpha"), timeout=60)
        result = done["results"][0]
        assert result["sandbox"] == "bwrap", result
        assert first["alpha"] not in result["stdout"] and "100000" not in result["stdout"]
        assert result["exit_code"] != 0
    finally:
        s.stop()


@pytest.mark.parametrize("value", ["1000", "-1", "'lots'"])
def test_a_bound_out_of_range_is_refused_at_load_naming_the_key(tmp_path: Path, value: str) -> None:
    path = tmp_path / "multiplex.yaml"
    path.write_text(f"gateway: {{retained_output_bytes: {value}}}\n")
    with pytest.raises(ConfigError) as caught:
        load_supervisor_config(path)
    message = str(caught.value)
    assert str(path) in message and "gateway.retained_output_bytes: " in message
    assert "\n" not in message


def test_a_reload_applies_a_new_bound_from_the_next_finished_run(served: Served) -> None:
    for n in range(3):
        _run(served, "alpha", _command(100_000 + n))
    assert served.retained.total > 512 * 1024
    config = served.root / "multiplex.yaml"
    config.write_text(config.read_text().replace(str(BOUND), str(256 * 1024)))
    assert served.api.post("/v1/admin/reload").status_code == 200
    _run(served, "alpha", "seq 1 3")
    assert served.retained.bound == 256 * 1024 and served.retained.total <= 256 * 1024
