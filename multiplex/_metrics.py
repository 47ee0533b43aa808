"""Prometheus metrics of one supervisor (docs/approvals.md#records), in its own registry.

A registry per supervisor keeps two supervisors in one process (tests, the
audit) from sharing counters.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["Metrics"]


class Metrics:
    """The counters, gauge and histograms a supervisor exports at ``/metrics``."""

    def __init__(self) -> None:
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
        self.reloads = Counter(
            "multiplex_config_reloads_total",
            "Config reloads of a profile home by result (ok, error, unchanged).",
            ("profile", "result"),
            registry=self.registry,
        )
        self.revocation_latency = Histogram(
            "multiplex_revocation_latency_seconds",
            "Time from a config file change that revoked rules to the revocation taking effect.",
            buckets=(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0),
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

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)
