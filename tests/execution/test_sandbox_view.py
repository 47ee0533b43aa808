"""docs/execution.md#the-sandbox: mounts made only where they change the view, and the view the same.

A hide, a read-only bind over the home's config or logs and a credential
source's blank are each left out where the sandbox shows nothing there anyway
(a fresh root or ``/tmp``, the read-only home, a folder emptied later); where
something does show them they are made, as these tests prove.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import multiplex.execution.sandbox._sandbox as sandbox
from multiplex import Supervisor
from multiplex.execution import bwrap_status
from multiplex.execution.sandbox._etc_mirror import etc_mirror
from multiplex.execution.sandbox._root_view import _etc_hidden, etc_blanked

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")

OFF = "approvals:\n  mode: 'off'\n"


def _run(sup: Supervisor, command: str, profile: str = "p") -> str:
    result = sup.run(command, profile=profile, context="cron")
    assert result.decision.approved, result.decision
    return result.stdout


def test_config_and_logs_named_writable_stay_read_only(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home(
        "p",
        "terminal:\n  sandbox: bwrap\n  writable_paths: [config.yaml, logs]\n" + OFF,
        files={"logs/decisions.jsonl": ""},
    )
    sup = supervisor_of("profiles_dir: profiles\n")
    before = (home / "config.yaml").read_text()
    out = _run(
        sup, f"echo x >> {home}/config.yaml; echo a=$?; echo x >> {home}/logs/new; echo b=$?"
    )
    assert "a=1" in out and "b=1" in out
    assert (home / "config.yaml").read_text() == before and not (home / "logs/new").exists()


def test_homes_and_config_under_a_writable_folder_stay_hidden(
    make_home, supervisor_of, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    make_home("p", f"terminal:\n  sandbox: bwrap\n  writable_paths: [{tmp_path}]\n" + OFF)
    make_home("q", "", files={"secret.txt": "Q-CANARY-7431"})
    sup = supervisor_of("profiles_dir: profiles\n# CONFIG-CANARY-9120\n")
    found = "grep -rsE '[Q]-CANARY-7431|[C]ONFIG-CANARY-9120'"  # never matches its own log line
    out = _run(sup, f"{found} {tmp_path}; ls -R {tmp_path}; true")
    assert "Q-CANARY-7431" not in out and "CONFIG-CANARY-9120" not in out
    assert "secret.txt" not in out  # not even the other home's names
    assert "touched" in _run(sup, f"touch {tmp_path}/w && echo touched")  # the folder is writable


@pytest.mark.parametrize("source", ["credentials/token.txt", "token.txt"])
def test_a_credential_source_is_blank_at_its_own_path(
    make_home, supervisor_of, source: str
) -> None:  # type: ignore[no-untyped-def]
    home = make_home(
        "p",
        f"terminal:\n  sandbox: bwrap\n  credential_files: [{source}]\n" + OFF,
        files={source: "CRED-CANARY-5580\n"},
    )
    sup = supervisor_of("profiles_dir: profiles\n")
    out = _run(sup, f'cat {home}/{source} 2>&1; cat "$CREDENTIALS_DIRECTORY/{source}"')
    assert out.count("[REDACTED:known]") == 1  # the value, from /run/credentials only


# --- the view is computed once per profile and kept while its paths are unchanged ------


def test_a_folder_that_appears_after_the_first_command_is_hidden(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    home = make_home("p", "terminal:\n  sandbox: bwrap\n" + OFF)
    sup = supervisor_of("profiles_dir: profiles\n")
    for _ in range(2):  # the first makes cache/: the view is kept from the second on
        _run(sup, "true")
    (home / "logs/runs").mkdir(parents=True)
    (home / "logs/runs/r1.json").write_text("RUNS-CANARY-2206")
    assert "RUNS-CANARY-2206" not in _run(sup, f"cat {home}/logs/runs/r1.json 2>&1; true")


def test_a_read_path_that_became_a_link_since_is_not_shown(
    make_home, supervisor_of, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    data, secret = tmp_path / "data", tmp_path / "secret"
    data.mkdir()
    (data / "a.csv").write_text("x,y\n")
    secret.mkdir()
    (secret / "a.csv").write_text("LINK-CANARY-8817\n")
    make_home("p", f"terminal:\n  sandbox: bwrap\n  read_paths: [{data}]\n" + OFF)
    sup = supervisor_of("profiles_dir: profiles\n")
    for _ in range(2):  # the first makes cache/ and workspace/: kept from the second on
        assert "x,y" in _run(sup, f"cat {data}/a.csv")
    data.rename(tmp_path / "data-before")
    data.symlink_to(secret)
    assert "LINK-CANARY-8817" not in _run(sup, f"cat {data}/a.csv 2>&1; true")


def _host_etc(hidden: dict[str, bool], *, blanks: bool) -> set[str]:
    """What a sandbox lists of /etc: the host's public entries; with ``blanks``, a hidden
    file is /dev/null and a hidden folder empty, else neither is there."""
    listed: set[str] = set()
    kinds = {stat.S_IFDIR: "d", stat.S_IFREG: "f", stat.S_IFLNK: "l", stat.S_IFCHR: "c"}
    for top, dirs, files in os.walk("/etc"):
        for name in [*dirs, *files]:
            path = os.path.join(top, name)
            info = os.lstat(path)
            kind = kinds.get(stat.S_IFMT(info.st_mode), "?")
            line = f"{path}\t{kind}\t{stat.S_IMODE(info.st_mode):o}"
            if path in hidden:  # a tmpfs (mode 0755) or /dev/null
                if not blanks:
                    continue
                line = f"{path}\td\t755" if hidden[path] else f"{path}\tc\t666"
            elif kind not in "dfl" and not blanks:
                continue  # a device or a pipe: the copy shows none
            listed.add(
                line
                if line.split("\t")[1] == "d"
                else f"{line}\t{0 if path in hidden else info.st_size}"
            )
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in hidden]
    return listed


def _listed(sup: Supervisor) -> set[str]:
    shown = _run(sup, r"find /etc -mindepth 1 -printf '%p\t%y\t%m\t%s\n'").splitlines()
    return {line.rsplit("\t", 1)[0] if line.split("\t")[1] == "d" else line for line in shown}


def test_the_sandbox_lists_the_hosts_etc_but_its_secrets(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    """Every public entry of the host's /etc is listed with its type, mode and size (a
    folder's size aside), from the copy once it is in step; no secret is there at all."""
    hidden = dict(_etc_hidden())
    make_home("p", "terminal:\n  sandbox: bwrap\n" + OFF)
    sup = supervisor_of("profiles_dir: profiles\n")
    _run(sup, "true")
    assert etc_mirror().wait_in_step(30)
    assert _listed(sup) == _host_etc(hidden, blanks=False)
    assert any(not is_dir for is_dir in hidden.values())  # a host without secrets proves little


def test_until_the_copy_is_in_step_etc_is_the_hosts_with_its_secrets_blank(
    make_home, supervisor_of, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A secret is blank: a file /dev/null, a folder empty."""
    hidden = dict(_etc_hidden())
    monkeypatch.setattr(sandbox, "etc_binds", etc_blanked)
    make_home("p", "terminal:\n  sandbox: bwrap\n" + OFF)
    sup = supervisor_of("profiles_dir: profiles\n")
    assert _listed(sup) == _host_etc(hidden, blanks=True)


def test_another_home_that_became_a_link_into_a_shown_folder_is_hidden(
    make_home, supervisor_of, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    shared = tmp_path / "shared"
    shared.mkdir()
    make_home("p", f"terminal:\n  sandbox: bwrap\n  writable_paths: [{shared}]\n" + OFF)
    other = make_home("q", OFF)
    (other / "secret.txt").write_text("HOME-LINK-CANARY-5521\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    for _ in range(2):  # the first makes cache/ and workspace/: kept from the second on
        _run(sup, "true")
    other.rename(shared / "q")
    other.symlink_to(shared / "q")
    assert "HOME-LINK-CANARY-5521" not in _run(sup, f"cat {shared}/q/secret.txt 2>&1; true")
