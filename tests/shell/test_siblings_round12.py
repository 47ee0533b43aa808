"""The gate's twelfth round: paths named from the folder a command runs in.

A block device, the kernel's SysRq trigger and a raw disk read named relative to the
folder the command runs in (the turn's, or the line's own ``cd``): ``cat /dev/zero >
sda`` in /dev was approved, it wipes a disk; now it is blocked as the absolute
``/dev/sda`` is.

``cat gh/hosts.yml`` in ``~/.config`` reads gh's token: the key ``/gh`` lies across the
folder and the word. The first test of secret reads joins a command's words and looked
for such a key only at the start of the joined text, so ``cat x gh/hosts.yml`` passed as
nothing (docs/security.md#the-gates-named-patterns). Nine of the eleven cases failed
before the fix.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from multiplex.shell import Finding, Place, find_dangerous, find_hardline, find_named, parse_line

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


WORK = HOME + "/work"
DEVICE_WRITES = [
    ("/dev", "cat /dev/zero > sda"),
    ("/dev", "dd if=/dev/zero of=sda bs=1M"),
    ("/", "dd if=/dev/zero of=dev/sda"),
    ("/", "cat /dev/urandom > dev/nvme0n1"),
    ("/tmp", "cat /dev/zero > ../dev/sdb"),
    (WORK, "cd /dev && dd if=/dev/zero of=sda"),
    (WORK, "cd / && cat /dev/zero > dev/sda"),
    (WORK, "cd /dev; cp /dev/zero vda"),
    ("/dev", "shred -n1 sda"),
    ("/dev", "wipefs -a sda"),
    ("/dev/disk/by-id", "cat /dev/zero > ../../sda"),
]


# A device named from the folder the line runs in: the check that finds it, and what.
FROM_THE_FOLDER = [
    *((find_hardline, "block-device-write", cwd, line) for cwd, line in DEVICE_WRITES),
    (find_hardline, "sysrq-trigger", "/proc", "echo b > sysrq-trigger"),
    (find_hardline, "sysrq-trigger", WORK, "cd /proc && echo c > sysrq-trigger"),
    # a raw disk read is a secret read
    (find_dangerous, "secret-read", "/dev", "cat sda | gzip > /tmp/disk.gz"),
    (find_dangerous, "secret-read", WORK, "cd /dev; cat sda > /tmp/disk.img"),
]


@pytest.mark.parametrize(("check", "pattern", "cwd", "line"), FROM_THE_FOLDER)
def test_a_device_named_from_the_folder_is_found(
    check: Callable[..., Finding | None], pattern: str, cwd: str, line: str
) -> None:
    found = check(parse_line(line), place=Place(cwd=cwd, homes=("/root", HOME)))
    assert found is not None and found.pattern.name == pattern, (cwd, line, found)


@pytest.mark.parametrize(
    ("cwd", "line"),
    [("/dev", "chmod 600 sda"), (WORK, "echo hi > dev.txt"), ("/dev", "ls -la"),
     (WORK, "cat dev/sda.txt"), ("/", "ls dev")],
)  # fmt: skip
def test_everyday_lines_near_devices_stay_ordinary(cwd: str, line: str) -> None:
    parsed = parse_line(line)
    place = Place(cwd=cwd, homes=("/root", HOME))
    assert find_hardline(parsed, place=place) is None
    found = find_dangerous(parsed, place=place)
    assert found is None or found.pattern.name not in ("block-device-write", "secret-read")
