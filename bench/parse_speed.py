"""Median time to parse one agent command line (docs/approvals.md#parsing).

Corpus: tests/shell/corpus/ordinary.txt (realistic agent commands). Baseline,
measured in the same run: tree-sitter's own parse of the same line, i.e. the cost
that no shell-grammar parser can avoid. Prints medians in microseconds and the
ratio parse_line / baseline, and the same for parse_line + find_dangerous.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import tree_sitter_bash
from tree_sitter import Language, Parser

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ORDINARY_CORPUS

from multiplex.shell import find_dangerous, find_hardline, parse_line

ROUNDS = 200


def lines() -> list[str]:
    out = []
    for raw in ORDINARY_CORPUS.read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            out.append(raw.replace("<NL>", "\n"))
    return out


def median_us(func: Callable[[str], object], line: str) -> float:
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter_ns()
        func(line)
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def main() -> None:
    parser = Parser(Language(tree_sitter_bash.language()))
    corpus = lines()
    base = [median_us(lambda s: parser.parse(s.encode()), line) for line in corpus]
    parse = [median_us(parse_line, line) for line in corpus]
    full = [
        median_us(lambda s: (find_hardline(p := parse_line(s)), find_dangerous(p)), line)
        for line in corpus
    ]
    b, p, f = statistics.median(base), statistics.median(parse), statistics.median(full)
    print(f"lines: {len(corpus)}, rounds per line: {ROUNDS}")
    print(f"tree-sitter parse (baseline)   median {b:7.1f} us")
    print(f"parse_line                     median {p:7.1f} us   ratio {p / b:5.1f}x")
    print(f"parse_line + hardline + danger median {f:7.1f} us   ratio {f / b:5.1f}x")
    print(f"parse_line p95 over lines             {sorted(parse)[int(len(parse) * 0.95)]:7.1f} us")


if __name__ == "__main__":
    main()
