"""Every code sample in README.md and docs/ runs as written (docs/ must stay true).

Python samples: each page's ```python blocks run in order as one script, in a
copy of the example project (``multiplex.yaml`` and ``profiles/``), in a fresh
interpreter. Shell samples: every ``multiplex …`` line without a placeholder
runs through the real CLI there and must not be a usage error (every command
and flag the docs show exists) or a traceback. A block preceded by
``<!-- sample: not run: why -->`` is skipped, the reason said in the page.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(<!-- sample: not run[^>]*-->\s*)?```(\w*)\n(.*?)```", re.S)
# Lines with these are templates, not commands (the reader fills them in).
_PLACEHOLDER = re.compile(r"…|<[A-Za-z]|\bNAME\b|\bRUN_ID\b|\bID\b|\bKIND\b|\bFILE\b|\bRULE\b|\$")
# Commands that serve or follow until stopped, and the minutes-long audit: their own
# tests run them for real.
_LONG_RUNNING = ("up", "--follow", "-f", "--install-completion", "audit")


def _blocks(page: Path, lang: set[str]) -> list[str]:
    return [
        body
        for skip, kind, body in _BLOCK.findall(page.read_text(encoding="utf-8"))
        if kind in lang and not skip
    ]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    shutil.copy(REPO / "multiplex.yaml", root / "multiplex.yaml")
    shutil.copytree(REPO / "profiles", root / "profiles")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p, {"python"})], ids=lambda p: p.name)
def test_python_samples_run(page: Path, project: Path) -> None:
    script = "\n\n".join(_blocks(page, {"python"}))
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{page.name}:\n{done.stderr[-3000:]}"


def _cli_lines() -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for page in PAGES:
        for body in _blocks(page, {"sh", "bash", "console", ""}):
            for raw in body.splitlines():
                line = raw.strip().removeprefix("$ ")
                if not line.startswith("multiplex "):
                    continue
                line = line.split("  #", 1)[0].split(" # ", 1)[0].strip()
                # A redirection (`< payload.json`) is the shell's, not the CLI's.
                if _PLACEHOLDER.search(line) or any(c in line for c in "&|[<"):
                    continue
                try:
                    words = shlex.split(line)
                except ValueError:
                    continue  # continued on the next line (a multi-line sample)
                if any(w in _LONG_RUNNING for w in words):
                    continue
                lines.append((page.name, line))
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("where,line", _cli_lines())
def test_cli_samples_parse(where: str, line: str, project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "multiplex", *shlex.split(line)[1:]],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    usage = ("No such option", "No such command", "Usage:", "Missing ")
    crashed = re.search(r"^Traceback \(most recent call last\):", done.stderr, re.M)
    assert not crashed and not any(u in done.stderr for u in usage), (
        f"{where}: {line}\n{done.stderr[-2000:]}"
    )
