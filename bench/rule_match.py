"""Benchmark: RuleSet.match against a naive scan of every rule (docs/allowlist.md#rules).

10,000 generated rules (many programs, literal and glob tokens, prefix rules, a
few glob/path program tokens) and 10,000 argvs (about a fifth built to match).
Prints the median per-argv time of ``RuleSet.match`` and of a naive loop that
tries each rule in order with ``fnmatch.fnmatch`` per word (same semantics),
measured in the same run, and their ratio. The naive loop is timed on a subset
of the argvs to keep the run short; the output says how many. Both answers are
compared on that subset; a disagreement exits 1.
"""

from __future__ import annotations

import fnmatch
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from multiplex.shell import Rule, RuleSet, parse_rule

RULES = 10_000
ARGVS = 10_000
BATCH = 100  # argvs per timed batch; medians are over batches
REPEATS = 3  # passes over the RuleSet batches
NAIVE_ARGVS = 600  # argvs the naive loop is timed on
TARGET = 20.0

COMMON = [
    "git",
    "npm",
    "yarn",
    "pnpm",
    "ls",
    "cat",
    "grep",
    "rg",
    "find",
    "docker",
    "kubectl",
    "python",
    "python3",
    "pip",
    "cargo",
    "make",
    "go",
    "node",
    "terraform",
    "helm",
    "aws",
    "gcloud",
    "az",
    "curl",
    "wget",
    "tar",
    "sed",
    "awk",
    "jq",
    "sort",
    "head",
    "tail",
]
SUBCOMMANDS = [
    "status",
    "log",
    "diff",
    "show",
    "build",
    "test",
    "run",
    "install",
    "get",
    "describe",
    "apply",
    "plan",
    "list",
    "push",
    "pull",
    "fetch",
    "check",
    "fmt",
    "lint",
    "exec",
]
ARGS = ["-v", "--all", "-n", "10", "main", "origin", "src/", "README.md", "--json", "-q", "."]
GLOB_ARGS = ["*.txt", "test:*", "src/*", "--format=*", "v[0-9]*", "?", "*.py", "feature/*"]


def generate(rng: random.Random) -> tuple[list[str], list[list[str]]]:
    programs = COMMON + [f"tool{i}" for i in range(300)]
    rules: list[str] = []
    seen: set[str] = set()
    while len(rules) < RULES:
        roll = rng.random()
        if roll < 0.004:  # a few program globs / paths: the always-scanned fallback
            program = rng.choice(["python3.*", "/usr/local/bin/*", "tool1?", "/opt/bin/tool*"])
        else:
            program = rng.choice(programs)
        words = [program, rng.choice(SUBCOMMANDS)]
        for _ in range(rng.randint(0, 3)):
            words.append(rng.choice(GLOB_ARGS if rng.random() < 0.3 else ARGS))
        if rng.random() < 0.4:
            words.append("*")
        text = " ".join(words)
        if text not in seen:
            seen.add(text)
            rules.append(text)
    argvs: list[list[str]] = []
    for _ in range(ARGVS):
        if rng.random() < 0.2:  # built from a rule, so it likely matches
            tokens = parse_rule(rng.choice(rules)).tokens
            argv = [_instance(token, rng) for token in tokens if token != "*"]
            if tokens[-1] == "*":
                argv += rng.sample(ARGS, rng.randint(0, 2))
        else:
            argv = [rng.choice([*programs, "/usr/bin/git", "bash", "rm"])]
            argv += [rng.choice(SUBCOMMANDS + ARGS) for _ in range(rng.randint(0, 4))]
        argvs.append(argv)
    rng.shuffle(argvs)
    return rules, argvs


def _instance(token: str, rng: random.Random) -> str:
    """A word the token matches (good enough for generated globs)."""
    word = token.replace("[0-9]", str(rng.randint(0, 9))).replace("?", "x")
    return word.replace("*", rng.choice(["", "a", "unit", "b/c"]))


def naive_match(rules: Sequence[tuple[str, ...]], argv: Sequence[str]) -> tuple[str, ...] | None:
    """Scan every rule in order; fnmatch.fnmatch per word; same semantics as Rule."""
    if not argv:
        return None
    for tokens in rules:
        program = argv[0] if "/" in tokens[0] else argv[0].rpartition("/")[2]
        if not fnmatch.fnmatch(program, tokens[0]):
            continue
        rest = tokens[1:]
        words = argv[1:]
        if rest and rest[-1] == "*":
            rest = rest[:-1]
            if len(words) < len(rest):
                continue
            words = words[: len(rest)]
        if len(words) != len(rest):
            continue
        if all(fnmatch.fnmatch(word, token) for word, token in zip(words, rest, strict=True)):
            return tokens
    return None


def per_argv_medians(
    match: Callable[[list[str]], object], argvs: list[list[str]], repeats: int
) -> float:
    samples: list[float] = []
    for _ in range(repeats):
        for start in range(0, len(argvs), BATCH):
            batch = argvs[start : start + BATCH]
            began = time.perf_counter()
            for argv in batch:
                match(argv)
            samples.append((time.perf_counter() - began) / len(batch))
    return statistics.median(samples)


def main() -> int:
    rng = random.Random(20240501)
    texts, argvs = generate(rng)
    began = time.perf_counter()
    ruleset = RuleSet(texts)
    build_s = time.perf_counter() - began
    token_lists = [rule.tokens for rule in ruleset]
    subset = argvs[:NAIVE_ARGVS]

    for argv in subset:  # same answers, or the comparison is meaningless
        got: Rule | None = ruleset.match(argv)
        want = naive_match(token_lists, argv)
        if (got.tokens if got else None) != want:
            print(f"MISMATCH on {argv!r}: RuleSet={got!r} naive={want!r}")
            return 1
    hits = sum(ruleset.matches(argv) for argv in argvs)

    fast = per_argv_medians(ruleset.match, argvs, REPEATS)
    naive = per_argv_medians(lambda argv: naive_match(token_lists, argv), subset, 1)
    ratio = naive / fast
    print(
        f"rules: {len(ruleset):,} (built in {build_s * 1000:.1f} ms); argvs: {len(argvs):,}"
        f" ({hits:,} match)"
    )
    print(
        f"RuleSet.match      median {fast * 1e6:9.2f} µs/argv "
        f"(all {len(argvs):,} argvs, batches of {BATCH}, {REPEATS} passes)"
    )
    print(
        f"naive fnmatch loop median {naive * 1e6:9.2f} µs/argv "
        f"(first {len(subset):,} argvs only, batches of {BATCH}, to bound run time)"
    )
    verdict = "meets" if ratio >= TARGET else "BELOW"
    print(f"ratio naive/RuleSet: {ratio:.1f}x ({verdict} the {TARGET:.0f}x target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
