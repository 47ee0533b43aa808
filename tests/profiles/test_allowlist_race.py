"""Real processes writing one profile's allowlist at once, and writers killed mid-write (docs/allowlist.md)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from multiplex.profiles._loader import read_allowlist
from multiplex.profiles.allowlist._roundtrip import commit_grants

pytestmark = pytest.mark.slow

CONFIG = """\
# shared profile -- the operator's comments must survive every writer
terminal:
  backend: local   # on the host
command_allowlist:   # appended to by "always" answers
  - git status   # from day one
approvals:
  mode: manual
"""
COMMENTS = [line for line in CONFIG.splitlines() if "#" in line]

GRANTER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from multiplex.profiles.allowlist._allowlist import AllowlistStore
    path, worker, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store = AllowlistStore(path, lock_timeout=60)
    Path(sys.argv[4]).touch()  # ready
    while not Path(sys.argv[5]).exists():
        time.sleep(0.005)
    for i in range(count):
        store.grant(f"tool{worker} --case {i} *")
    sys.exit(len(store.unsaved))
    """
)

CHURNER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from multiplex.profiles.allowlist._allowlist import AllowlistStore
    store = AllowlistStore(Path(sys.argv[1]))
    store.grant("warm up")  # one write first: it drops the intent a killed predecessor left
    print("ready", flush=True)
    i = 0
    while True:
        store.grant(f"churn {i} 'quoted word' *")
        if i >= 5:
            store.revoke(f"churn {i - 5} 'quoted word' *")
        i += 1
    """
)


def temp_files(directory: Path, suffix: str = ".tmp") -> list[str]:
    """Temp files of writes in flight (.tmp) or grant intents waiting for a writer (.json)."""
    return [p.name for p in directory.iterdir() if p.name.endswith(suffix)]


def assert_intact(path: Path) -> list[str]:
    text = path.read_text()
    for comment in COMMENTS:
        assert comment in text
    yaml.safe_load(text)
    return read_allowlist(path)


def test_eight_processes_granting_250_rules_each_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    go = tmp_path / "go"
    procs = []
    for worker in range(8):
        ready = tmp_path / f"ready{worker}"
        args = [str(path), str(worker), "250", str(ready), str(go)]
        procs.append((subprocess.Popen([sys.executable, "-c", GRANTER, *args]), ready))
    deadline = time.monotonic() + 30
    while not all(ready.exists() for _, ready in procs):
        assert time.monotonic() < deadline, "a granter did not start"
        assert all(p.poll() is None for p, _ in procs), "a granter died"
        time.sleep(0.05)
    go.touch()
    codes = [p.wait(timeout=50) for p, _ in procs]
    assert codes == [0] * 8, "a granter exited with unsaved grants or an error"
    on_disk = assert_intact(path)
    expected = {f"tool{w} --case {i} *" for w in range(8) for i in range(250)}
    assert expected - set(on_disk) == set()
    assert len(on_disk) == 2001 == len(set(on_disk))
    assert temp_files(tmp_path) == temp_files(tmp_path, ".json") == []


def test_a_writer_killed_at_random_moments_never_corrupts_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    rng = random.Random(20260529)
    for _ in range(20):
        churner = subprocess.Popen(
            [sys.executable, "-c", CHURNER, str(path)], stdout=subprocess.PIPE, text=True
        )
        assert churner.stdout is not None and churner.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(churner.pid, signal.SIGKILL)
        churner.wait(timeout=10)
        churner.stdout.close()
        on_disk = assert_intact(path)
        assert on_disk[0] == "git status"
        assert len(temp_files(tmp_path)) <= 1  # at most the one that was in flight
        assert len(temp_files(tmp_path, ".json")) <= 1  # at most its own grant intent
    commit_grants(path, ["after"], lock_timeout=5)
    # The next write cleans up a dead writer's temp file and drops its intent.
    assert temp_files(tmp_path) == temp_files(tmp_path, ".json") == []
    assert assert_intact(path)[-1] == "after"


SPENDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from multiplex.profiles import AllowlistStore

    path, stop, ready = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    store = AllowlistStore(path)
    spent = 0
    while not stop.exists():
        store.reload()
        spent += store.ruleset(None).spend([["true"]])
        if spent == 1:
            ready.touch()
    print(spent)
    """
)


def test_an_operators_saves_while_uses_are_taken_are_never_lost(tmp_path: Path) -> None:
    # Taking a use rewrites config.yaml; an operator's editor takes no lock. A save that
    # landed between that write's read and its rename was overwritten: a deny line gone
    # from the file and from the running config. Each write now swaps its file in only
    # if the one it read is still there, and reads again otherwise.
    path = tmp_path / "config.yaml"
    head = "command_allowlist:\n  - {rule: 'true', uses: 100000}\napprovals:\n  deny:\n"
    path.write_text(head + "    - 'never-0 *'\n")
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    spender = subprocess.Popen(
        [sys.executable, "-c", SPENDER, str(path), str(stop), str(ready)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():  # spending in a tight loop from now on
            assert time.monotonic() < deadline and spender.poll() is None, "no use was taken"
            time.sleep(0.01)
        for n in range(1, 41):
            current = path.read_text()  # the editor's buffer: the file as it is now
            edited = current + f"    - 'never-{n} *'\n"
            temp = tmp_path / ".config.yaml.swp"
            temp.write_text(edited)
            os.replace(temp, path)  # its save: write a copy, rename it over
            time.sleep(0.02)
    finally:
        stop.touch()
        out, _ = spender.communicate(timeout=60)
    assert int(out) > 10, "the spender took too few uses to race the saves"
    text = path.read_text()
    lost = [n for n in range(41) if f"'never-{n} *'" not in text]
    assert lost == [], f"saves lost: {lost}"
    yaml.safe_load(text)
