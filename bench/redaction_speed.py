"""Throughput of Redactor.redact (docs/redaction.md) and evidence that it grows linearly.

Prints, for realistic log text with some secrets at 10 KB, 100 KB and 1 MB and for
adversarial text, the median MB/s of a full Redactor (own known values, other
profiles' known values, layer 2), the ratio of time per byte at 1 MB to 10 KB
(about 1 means linear), and the ratio to a bare ``str.replace`` pass over the
same text (the floor any redactor pays). Runs in well under a minute.
"""

from __future__ import annotations

import random
import statistics
import string
import time
from collections.abc import Callable

from multiplex.redaction import KnownValues, Redactor

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
    chunks = [
        "a" * 4096,
        "=" * 4096,
        "eyJ" * 1365,
        ":@" * 2048,
        "-----BEGIN RSA PRIVATE KEY-----\n" * 128,
        "key=" * 1024,
        "a://b:" * 682,
        "sk-a1-" * 682,
    ]
    text = "".join(chunks)
    return (text * (size // len(text) + 1))[:size]


def median_seconds(fn: Callable[[], object], min_runs: int = 5, budget: float = 1.5) -> float:
    times: list[float] = []
    deadline = time.perf_counter() + budget
    while len(times) < min_runs or (time.perf_counter() < deadline and len(times) < 50):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    redactor = Redactor(KnownValues(OWN), others=KnownValues(OTHERS))
    redactor.redact("warm up: compiles the known-value patterns once")
    print(f"Redactor: {len(OWN)} own values, {len(OTHERS)} other profiles' values, layer 2 on")
    print(f"{'input':<22}{'size':>10}{'MB/s':>10}{'str.replace MB/s':>18}{'x floor':>10}")
    per_byte: dict[tuple[str, int], float] = {}
    for label, make in (("realistic log", realistic), ("adversarial", adversarial)):
        for size in (10_000, 100_000, 1_000_000):
            text = make(size)
            t_red = median_seconds(lambda text=text: redactor.redact(text))  # type: ignore[misc]
            t_floor = median_seconds(lambda text=text: text.replace("ghp_", "[REDACTED]"))  # type: ignore[misc]
            per_byte[(label, size)] = t_red / size
            print(
                f"{label:<22}{size:>10,}{size / t_red / 1e6:>10.1f}"
                f"{size / t_floor / 1e6:>18.0f}{t_red / t_floor:>10.0f}"
            )
    for label in ("realistic log", "adversarial"):
        ratio = per_byte[(label, 1_000_000)] / per_byte[(label, 10_000)]
        print(f"{label}: time per byte at 1 MB / at 10 KB = {ratio:.2f} (about 1 = linear)")


if __name__ == "__main__":
    main()
