"""Throughput of Redactor.redact (docs/redaction.md) and evidence that it grows linearly.

Prints which engine redaction uses, then, for realistic log text with some
secrets and for adversarial text at 10 KB, 100 KB, 1 MB and 10 MB, the median
MB/s of a full Redactor (own known values, other profiles' known values, layer
2), the floor (a bare ``str.replace`` pass over the same text, which any
redactor pays) measured in the same run, and the ratio of the two. Then the
time per byte at the largest size over that at the smallest (about 1 means
linear), and the pure-Python fallback measured in the same run at 1 MB, with
the engine's speed-up over it. Times are the process's CPU time; machines are
noisy all the same: compare the ratios.
Runs in about a minute.
"""

from __future__ import annotations

import random
import statistics
import string
import time
from collections.abc import Callable

from multiplex.redaction import KnownValues, Redactor, _engine

_RNG = random.Random(7)


def _token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


OWN = [_token(24) for _ in range(20)]
OTHERS = [_token(24) for _ in range(300)]  # 30 other profiles x 10 secrets

_LINES = [
    "2024-05-01T12:00:{s:02d}Z INFO worker[{n}] GET /api/v1/items?page={n} status=200 took={n}ms",
    "2024-05-01T12:00:{s:02d}Z DEBUG cache hit key=items:{n} size={n} ttl=300",
    "2024-05-01T12:00:{s:02d}Z WARN retrying https://api.example.com/v2/jobs/{n} after 429",
    '{{"level":"info","msg":"user login","user":"alice@example.com","session_len":{n}}}',
    'Traceback (most recent call last): File "/srv/app/main.py", line {n}, in handler',
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a{n:02d} Merge pull request #{n}",
]
_SECRET_LINES = [
    "export API_TOKEN=" + _token(32),
    "Authorization: Bearer " + _token(40),
    "postgres://app:" + _token(16) + "@db.internal:5432/prod",
    "found ghp_" + _token(36) + " in history",
    "leaked " + OWN[3] + " and " + OTHERS[42],
]


def realistic(size: int) -> str:
    out: list[str] = []
    length = 0
    i = 0
    while length < size:
        i += 1
        line = (
            _RNG.choice(_SECRET_LINES)
            if i % 25 == 0
            else _RNG.choice(_LINES).format(s=i % 60, n=i % 997)
        )
        out.append(line)
        length += len(line) + 1
    return "\n".join(out)[:size]


def adversarial(size: int) -> str:
    # Runs of 1 KB of each kind, so every size from 10 KB up holds the same mix.
    chunks = [
        "a" * 1024,
        "=" * 1024,
        "eyJ" * 341,
        ":@" * 512,
        "-----BEGIN RSA PRIVATE KEY-----\n" * 32,
        "key=" * 256,
        "a://b:" * 170,
        "sk-a1-" * 170,
    ]
    text = "".join(chunks)
    return (text * (size // len(text) + 1))[:size]


def median_seconds(fn: Callable[[], object], min_runs: int = 5, budget: float = 1.5) -> float:
    # CPU time of this process: on a shared machine, wall time mostly measures
    # the other processes.
    times: list[float] = []
    deadline = time.process_time() + budget
    while len(times) < min_runs or (time.process_time() < deadline and len(times) < 50):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def _redactor() -> Redactor:
    redactor = Redactor(KnownValues(OWN), others=KnownValues(OTHERS))
    redactor.redact("warm up: builds the matchers once ghp_ API_KEY=x")
    return redactor


SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
INPUTS: tuple[tuple[str, Callable[[int], str]], ...] = (
    ("realistic log", realistic),
    ("adversarial", adversarial),
)


def _row(label: str, size: int, t_red: float, t_floor: float) -> str:
    return (
        f"{label:<16}{size:>12,}{size / t_red / 1e6:>10.1f}"
        f"{size / t_floor / 1e6:>12.0f}{t_red / t_floor:>10.1f}"
    )


def main() -> None:
    engine = _engine.engine_name()
    redactor = _redactor()
    with _engine.pure_python():
        fallback = _redactor()
    print(f"engine: {engine}; pure-Python fallback measured alongside at 1 MB")
    print(f"Redactor: {len(OWN)} own values, {len(OTHERS)} other profiles' values, layer 2 on")
    print(f"{'input':<16}{'size':>12}{'MB/s':>10}{'floor MB/s':>12}{'x floor':>10}")
    per_byte: dict[tuple[str, int], float] = {}
    at_1mb: dict[str, tuple[str, float, float]] = {}
    for label, make in INPUTS:
        for size in SIZES:
            text = make(size)
            runs = 3 if size >= 10_000_000 else 5
            t_red = median_seconds(lambda text=text: redactor.redact(text), runs)  # type: ignore[misc]
            t_floor = median_seconds(lambda text=text: text.replace("ghp_", "[REDACTED]"), runs)  # type: ignore[misc]
            per_byte[(label, size)] = t_red / size
            print(_row(label, size, t_red, t_floor))
            if size == 1_000_000:
                at_1mb[label] = (text, t_red, t_floor)
    for label, _ in INPUTS:
        ratio = per_byte[(label, SIZES[-1])] / per_byte[(label, SIZES[0])]
        print(
            f"{label}: time per byte at {SIZES[-1]:,} / at {SIZES[0]:,} = {ratio:.2f}"
            " (about 1 = linear)"
        )
    print("pure-Python fallback (the path without the hyperscan wheel), same run:")
    for label, (text, t_red, _t_floor) in at_1mb.items():
        assert fallback.redact(text) == redactor.redact(text), "engines disagree"
        t_slow = median_seconds(lambda text=text: fallback.redact(text), 3)  # type: ignore[misc]
        t_floor = median_seconds(lambda text=text: text.replace("ghp_", "[REDACTED]"))  # type: ignore[misc]
        print(
            f"{_row(label, len(text), t_slow, t_floor)}   {engine} is {t_slow / t_red:.1f}x faster"
        )


if __name__ == "__main__":
    main()
