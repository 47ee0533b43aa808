"""Prometheus metrics of one supervisor (docs/approvals.md#records), in its own registry.

A registry per supervisor keeps two supervisors in one process (tests, the
audit) from sharing counters. A supervisor that nobody scrapes (every CLI
command but ``up``) counts nothing: ``Metrics(exported=False)`` never imports
prometheus_client, which (with the http.server it pulls in) was a fifth of the
start-up of each standalone audit probe (docs/operations.md#capacity).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["FAST_ANSWER_S", "Metrics"]

# An answer this soon after its prompt was hardly read (docs/approvals.md#fatigue).
FAST_ANSWER_S = 2.0


class _Unexported:
    """Stands in for every metric of an unexported supervisor: each call does nothing."""

    def labels(self, *_values: object, **_named: object) -> _Unexported:
        return self

    def inc(self, _amount: float = 1) -> None:
        return None

    def dec(self, _amount: float = 1) -> None:
        return None

    def set(self, _value: float) -> None:
        return None

    def observe(self, _value: float) -> None:
        return None


_UNEXPORTED = _Unexported()


class _ReloadCounts:
    """``multiplex_config_reloads_total``: what a Counter labelled (profile, result) exports.

    Every home is loaded once at start; a prometheus_client child made for each
    there cost about a twentieth of loading 10,000 homes. These are plain
    counts, and the Counter's samples (``_total`` and ``_created``) are made
    when the registry is read.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], list[float]] = {}  # -> [count, created]

    def labels(self, profile: str, result: str) -> _ReloadCount:
        return _ReloadCount(self, (str(profile), str(result)))

    def add(self, key: tuple[str, str], amount: float) -> None:
        with self._lock:
            found = self._counts.get(key)
            if found is None:
                self._counts[key] = [float(amount), time.time()]
            else:
                found[0] += amount

    def describe(self) -> list[Any]:
        return [self._family()]

    def collect(self) -> list[Any]:
        from prometheus_client import metrics

        created = getattr(metrics, "_use_created", True)
        family = self._family()
        with self._lock:
            counts = [(k, v[0], v[1]) for k, v in self._counts.items()]
        for key, count, at in counts:
            family.add_metric(key, count, created=at if created else None)
        return [family]

    @staticmethod
    def _family() -> Any:
        from prometheus_client.core import CounterMetricFamily

        return CounterMetricFamily(
            "multiplex_config_reloads",
            "Config reloads of a profile home by result (ok, error, unchanged).",
            labels=("profile", "result"),
        )


class _ReloadCount:
    __slots__ = ("_counts", "_key")

    def __init__(self, counts: _ReloadCounts, key: tuple[str, str]) -> None:
        self._counts = counts
        self._key = key

    def inc(self, amount: float = 1) -> None:
        self._counts.add(self._key, amount)


class Metrics:
    """The counters, gauge and histograms a supervisor exports at ``/metrics``."""

    registry: CollectorRegistry | None

    def __init__(self, *, exported: bool = True) -> None:
        self.exported = exported
        if not exported:
            self.registry = None
            for name in _NAMES:
                setattr(self, name, _UNEXPORTED)
            return
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.decisions = Counter(
            "multiplex_approval_decisions_total",
            "Approval gate decisions by outcome and by who decided.",
            ("profile", "outcome", "decided_by"),
            registry=self.registry,
        )
        self.patterns = Counter(
            "multiplex_gate_patterns_total",
            "Named gate patterns found (docs/security.md#the-gates-named-patterns), by outcome.",
            ("profile", "pattern", "outcome"),
            registry=self.registry,
        )
        self.reloads = _ReloadCounts()
        self.registry.register(self.reloads)
        self.revocation_latency = Histogram(
            "multiplex_revocation_latency_seconds",
            "Time from a config file change that revoked rules to the revocation taking effect.",
            buckets=(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0),
            registry=self.registry,
        )
        self.grants_ended = Counter(
            "multiplex_grants_ended_total",
            "Grants that stopped approving by themselves: expired, or their last use taken.",
            ("profile", "reason"),
            registry=self.registry,
        )
        # Fatigue (docs/approvals.md#fatigue): how often people are asked and how they answer.
        self.prompts = Counter(
            "multiplex_approval_prompts_total",
            "Approval requests put to a human (one per prompt, not per coalesced waiter).",
            ("profile",),
            registry=self.registry,
        )
        self.answers = Counter(
            "multiplex_approval_answers_total",
            "Prompts a human answered, by profile and whether the answer approved.",
            ("profile", "answer"),
            registry=self.registry,
        )
        self.answer_seconds = Histogram(
            "multiplex_approval_answer_seconds",
            "Time from a prompt to a human's answer.",
            ("profile",),
            buckets=(0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0),
            registry=self.registry,
        )
        self.fast_answers = Counter(
            "multiplex_approval_fast_answers_total",
            f"Answers given within {FAST_ANSWER_S:g} s of the prompt (rubber-stamping).",
            ("profile",),
            registry=self.registry,
        )
        self.pending = Gauge(
            "multiplex_pending_approvals",
            "Approval requests waiting for an answer.",
            ("profile",),
            registry=self.registry,
        )
        self.runs = Counter(
            "multiplex_runs_total",
            "Runs finished, by profile and final status.",
            ("profile", "status"),
            registry=self.registry,
        )
        self.commands = Counter(
            "multiplex_commands_total",
            "Commands executed, by profile and whether they exited 0.",
            ("profile", "result"),
            registry=self.registry,
        )
        # docs/execution.md#egress
        self.egress_refused = Counter(
            "multiplex_egress_refused_total",
            "Connections the egress proxy refused, by profile.",
            ("profile",),
            registry=self.registry,
        )
        # Session kernels (docs/kernels.md#metrics).
        self.kernel_cells = Counter(
            "multiplex_kernel_cells_total",
            "Kernel cells run, by profile and outcome (ok, error, timeout, cancelled, exited, died, refused).",
            ("profile", "outcome"),
            registry=self.registry,
        )
        self.kernel_spawns = Counter(
            "multiplex_kernel_spawns_total",
            "Kernel processes started, by profile.",
            ("profile",),
            registry=self.registry,
        )
        self.kernel_evictions = Counter(
            "multiplex_kernel_evictions_total",
            "Idle kernels ended to stay within max_session_kernels or max_kernels.",
            ("profile",),
            registry=self.registry,
        )
        self.kernel_reaps = Counter(
            "multiplex_kernel_reaps_total",
            "Kernels ended after code_execution.kernel_idle_timeout idle.",
            ("profile",),
            registry=self.registry,
        )
        self.kernel_kills = Counter(
            "multiplex_kernel_kills_total",
            "Kernels killed, by cause (timeout, cancelled, reset, stale, session reset, ...).",
            ("profile", "cause"),
            registry=self.registry,
        )

    def answered(self, profile: str, approved: bool, seconds: float) -> None:
        """A human answered a prompt of ``profile`` after ``seconds``."""
        self.answers.labels(profile, "approved" if approved else "denied").inc()
        self.answer_seconds.labels(profile).observe(seconds)
        if seconds < FAST_ANSWER_S:
            self.fast_answers.labels(profile).inc()

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric (empty when not exported)."""
        if self.registry is None:
            return b""
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    # Set in __init__ (each a prometheus_client metric, or the do-nothing stand-in).
    decisions: Any
    patterns: Any
    reloads: Any
    revocation_latency: Any
    grants_ended: Any
    prompts: Any
    answers: Any
    answer_seconds: Any
    fast_answers: Any
    pending: Any
    runs: Any
    commands: Any
    egress_refused: Any
    kernel_cells: Any
    kernel_spawns: Any
    kernel_evictions: Any
    kernel_reaps: Any
    kernel_kills: Any


_NAMES = tuple(name for name, kind in Metrics.__annotations__.items() if kind == "Any")
