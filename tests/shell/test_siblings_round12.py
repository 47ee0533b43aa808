"""The gate's twelfth round: a secret named across the folder a line runs in, not first among its words.

``cat gh/hosts.yml`` in ``~/.config`` reads gh's token: the key ``/gh`` lies across the
folder and the word. The first test of secret reads joins a command's words and looked
for such a key only at the start of the joined text, so ``cat x gh/hosts.yml`` passed as
nothing (docs/security.md#the-gates-named-patterns). Nine of the eleven cases failed
before the fix.
"""

from __future__ import annotations

import pytest

from multiplex.shell import Place, find_named, parse_line

HOME = "/srv/mx/profiles/manual"

CASES = [
    (HOME + "/.config", "cat x gh/hosts.yml"),
    (HOME + "/.config", "grep -l token notes.txt gh/hosts.yml"),
    (HOME + "/.config", "cp README.md gh/hosts.yml /tmp/out"),
    (HOME + "/.config", "tar czf /tmp/c.tgz notes.txt gh/hosts.yml"),
    (HOME + "/.config", "head -5 a.txt b.txt gh/hosts.yml"),
    (HOME + "/.config", "base64 -w0 a gh/hosts.yml"),
    (HOME + "/.config", "cat x hub"),
    (HOME + "/.config", "cat x op/config"),
    ("/etc/ssl", "cat certs/a.pem private/server.pem"),
    ("/", "od -c x dev/mem"),
    ("/dev", "cat x mem"),
]


@pytest.mark.parametrize(("cwd", "line"), CASES)
def test_a_secret_across_the_folder_is_read_whatever_word_names_it(cwd: str, line: str) -> None:
    place = Place(cwd=cwd, homes=("/root", HOME))
    found = find_named(parse_line(line), place)
    assert found is not None and found.pattern.name == "secret-read", (cwd, line, found)


@pytest.mark.parametrize(("cwd", "line"), CASES)
def test_the_same_words_elsewhere_read_no_secret(cwd: str, line: str) -> None:
    place = Place(cwd=HOME + "/work", homes=("/root", HOME))
    found = find_named(parse_line(line.replace("/etc", "etc")), place)
    assert found is None or found.pattern.name != "secret-read", (line, found)
