"""The benchmarks name files of the repository that exist (`make bench` runs every one)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# A repository path a benchmark reads or cites: a folder of the tree, then a file with a suffix.
NAMED = re.compile(r"\b((?:tests|docs|bench)/[\w./-]*\w\.\w+)")


def test_every_file_a_benchmark_names_exists() -> None:
    named = {
        (bench.name, path)
        for bench in sorted((REPO / "bench").glob("*.py"))
        for path in NAMED.findall(bench.read_text(encoding="utf-8"))
    }
    assert ("parse_speed.py", "tests/shell/corpus/ordinary.txt") in named
    missing = sorted(f"{bench}: {path}" for bench, path in named if not (REPO / path).exists())
    assert not missing, "benchmarks name files that are not there:\n" + "\n".join(missing)
