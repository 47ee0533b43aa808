"""The supervisor's gate and execution: commands and code cells in a profile's scope (docs/design.md#the-python-api).

:class:`GatedExecution` is the half of :class:`~multiplex.supervision.Supervisor`
that decides and runs: ``test`` (what the gate would do), ``run`` and
``run_or_park`` (gate, then execute in the turn's scope), the code cells of
session kernels, and stopping what runs. Turns and the lifecycle stay in
``_supervisor.py``, the served profiles in ``_served.py``; this mixin only uses them.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from multiplex._errors import ConfigError
from multiplex._metrics import Metrics
from multiplex.approval import Gate
from multiplex.approval._decision import Decision, Verdict
from multiplex.approval.grants._sessions import SessionState
from multiplex.approval.waiting._parked import Parked
from multiplex.execution import LiveOutput, ProcessTracker, RunResult, execute
from multiplex.execution.kernels import CellResult, KernelPool
from multiplex.profiles import Profile
from multiplex.scopes import ContextKind, ProfileScope, peek_scope
from multiplex.supervision._config import SupervisorConfig
from multiplex.supervision._turn import ParkedRun, Turn

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["GatedExecution"]


class GatedExecution:
    """Gate and execute commands and code cells (mixed into the Supervisor)."""

    gate: Gate
    processes: ProcessTracker
    metrics: Metrics
    kernels: KernelPool
    config: SupervisorConfig
    _profiles: Mapping[str, Profile]
    _views: Mapping[str, object]

    # The Supervisor's own (turns, profiles): used here, defined there.
    turn: Callable[..., Turn]
    _scope_for: Callable[[str, str, str | ContextKind, ProfileScope | None], ProfileScope]
    profile: Callable[[str], Profile]

    # -- the gate and execution ------------------------------------------------
    def test(
        self,
        profile: str,
        command: str,
        context: str | ContextKind = ContextKind.API,
        session: str = "test",
        *,
        spend: bool = False,
    ) -> Verdict:
        """What the gate would do for ``command`` in ``profile``: never asks, and pure
        unless ``spend`` (the decision is acted on: a use of a limited grant is taken)."""
        scope = self._scope_for(profile, session, context, None)
        return self.gate.evaluate(scope, command, spend=spend)

    def test_is_warm(self, profile: str) -> bool:
        """Whether :meth:`test` for ``profile`` builds nothing first: its view is
        loaded and its allowlist's rule index built (after a reload the first
        decision builds it: milliseconds per thousand rules)."""
        home = self._profiles.get(profile)
        if home is None or not home.loaded or profile not in self._views:
            return False
        return home.allowlist.indexed

    def run(
        self,
        command: str,
        profile: str | None = None,
        session: str = "default",
        context: str | ContextKind = ContextKind.API,
        *,
        run_id: str | None = None,
        on_output: Callable[[str, str], None] | None = None,
        on_decided: Callable[[Decision], None] | None = None,
    ) -> RunResult:
        """Gate ``command`` and, when approved, run it in the profile's scope.

        With ``profile=None`` inside a turn, it runs in that turn; otherwise it
        opens its own turn. Blocks while an approval is pending. ``on_output``
        gets ``(stream, text)`` as the command writes, redacted whole lines
        (docs/execution.md#live-output); the result holds all of it too.
        ``on_decided(decision)`` is called once the decision is recorded, before
        the command starts; what it raises, the command does not start for.
        """
        bound = peek_scope()
        if profile is None and bound is not None:
            return self._run_in(bound, command, run_id, on_output=on_output, on_decided=on_decided)
        with self.turn(profile, session, context) as scope:
            return self._run_in(scope, command, run_id, on_output=on_output, on_decided=on_decided)

    def run_or_park(
        self,
        command: str,
        profile: str,
        session: str = "default",
        context: str | ContextKind = ContextKind.API,
        *,
        run_id: str | None = None,
        timeout: float | None = None,
        on_output: Callable[[str, str], None] | None = None,
    ) -> RunResult | ParkedRun:
        """Like :meth:`run` in a turn of its own, but a wait for a human is returned, not awaited.

        A :class:`ParkedRun` keeps its turn open and holds no thread: call its
        ``when_settled`` and then, in any thread, ``resume()`` for the result.
        ``timeout`` shortens ``terminal.timeout`` for this command (never lengthens it).
        """
        turn = self.turn(profile, session, context)
        scope = turn.__enter__()
        try:
            step = self.gate.begin(scope, command, run_id=run_id)
            if isinstance(step, Parked):
                turn.suspend()
                return ParkedRun(
                    turn,
                    scope,
                    step,
                    lambda d: self._execute(
                        scope, command, d, timeout=timeout, run_id=run_id, on_output=on_output
                    ),
                )
            result = self._execute(
                scope, command, step, timeout=timeout, run_id=run_id, on_output=on_output
            )
        except BaseException:
            turn.__exit__(None, None, None)
            raise
        turn.__exit__(None, None, None)
        return result

    def _run_in(
        self,
        scope: ProfileScope,
        command: str,
        run_id: str | None,
        *,
        tracker: ProcessTracker | None = None,
        timeout: float | None = None,
        on_output: Callable[[str, str], None] | None = None,
        on_decided: Callable[[Decision], None] | None = None,
    ) -> RunResult:
        decision = self.gate.decide(scope, command, run_id=run_id)
        if on_decided is not None:
            on_decided(decision)
        return self._execute(
            scope,
            command,
            decision,
            tracker=tracker,
            timeout=timeout,
            run_id=run_id,
            on_output=on_output,
        )

    def _execute(
        self,
        scope: ProfileScope,
        command: str,
        decision: Decision,
        *,
        tracker: ProcessTracker | None = None,
        timeout: float | None = None,
        run_id: str | None = None,
        on_output: Callable[[str, str], None] | None = None,
    ) -> RunResult:
        mounts = tuple(
            {"source": str(m.source), "target": m.target} for m in scope.credential_mounts
        )
        if not decision.approved:
            return RunResult(command, decision, mounts=mounts)
        limit = scope.view.timeout if timeout is None else min(timeout, scope.view.timeout)
        done = execute(
            scope,
            command,
            tracker=tracker or self.processes,
            timeout=limit,
            run_id=run_id,
            hidden=self.hidden_paths,
            on_output=None if on_output is None else LiveOutput(scope.redact, on_output),
        )
        self.metrics.commands.labels(scope.name, "ok" if done.exit_code == 0 else "error").inc()
        for refused in done.egress_refused:
            self._record_egress(scope, command, refused)
        return RunResult(
            command,
            decision,
            done.exit_code,
            scope.redact(done.stdout),
            scope.redact(done.stderr),
            done.timed_out,
            done.truncated,
            done.duration_ms,
            mounts,
            backend=done.backend,
            sandbox=None if done.error is not None else done.sandbox,
            egress_refused=tuple(scope.redact(line) for line in done.egress_refused),
            error=None if done.error is None else scope.redact(done.error),
        )

    def _record_egress(self, scope: ProfileScope, command: str, refused: str) -> None:
        """docs/execution.md#egress: a refusal is counted and kept in decisions.jsonl."""
        self.metrics.egress_refused.labels(scope.name).inc()
        self.gate.recorder.record_egress(
            profile=scope.name,
            home=scope.home,
            session=scope.session,
            turn_id=scope.turn_id,
            context=scope.context.value,
            command=command,
            refused=refused,
        )

    @functools.cached_property
    def hidden_paths(self) -> tuple[Path, ...]:
        """What a sandboxed command never sees: every home, the folders holding them, this config (docs/execution.md#the-sandbox)."""
        paths: set[Path] = set()
        for profile in self._profiles.values():
            paths.update((profile.home, profile.home.parent))
        with contextlib.suppress(ConfigError, OSError):
            paths.update(home for home in self.config.homes().values())
            paths.add((self.config.base_dir / self.config.profiles_dir).resolve())
        if self.config.source is not None:
            paths.add(self.config.source)
        # The gateway's state (its admin token, url): never shown, whatever the cwd.
        paths.add(self.config.base_dir / ".multiplex")
        paths.discard(Path("/"))
        return tuple(sorted(paths))

    def cancel_commands(self, run_id: str, *, wait: bool = True) -> int:
        """Stop the commands of run ``run_id`` now running (and any it starts later).

        ``wait=False`` returns at once; the stop (up to a short grace) goes on in the background.
        """
        return self.processes.cancel(run_id, wait=wait)

    def kill_running(self) -> int:
        """Kill every command still running (the end of a graceful shutdown)."""
        return self.processes.kill_all()

    def reset_session(self, profile: str, session: str, cause: str = "session reset") -> int:
        """``/new``, ``/reset``: drop the session's grants, cancel its pending approvals, end its kernels."""
        cancelled = self.gate.reset_session(self.profile(profile), session, cause)
        self.kernels.dispose_session(profile, session, cause)
        return cancelled

    def session_grants(self, profile: str) -> dict[str, SessionState]:
        """Each session of ``profile`` that holds grants or yolo (``approvals sessions``)."""
        held = self.gate.sessions(self.profile(profile)).sessions().items()
        return {name: state for name, state in held if state.grants.texts() or state.yolo}

    def revoke_grant(self, profile: str, session: str, rule: str | None = None) -> bool:
        """Take back one session grant, or every grant and the yolo of the session."""
        return self.gate.revoke_grant(self.profile(profile), session, rule)

    # -- code cells ------------------------------------------------------------
    def execute_code(
        self,
        code: str,
        *,
        profile: str,
        session: str,
        context: str | ContextKind = ContextKind.API,
        reset: bool = False,
        timeout: float | None = None,
        run_id: str | None = None,
    ) -> CellResult:
        """Run ``code`` as one cell of the session's persistent kernel (docs/kernels.md).

        The cell opens its own turn (a delegated child inside another turn);
        shell commands it sends through ``multiplex.kernel.run`` are gated
        under this turn's authority. ``reset=True`` discards the kernel's state
        first; ``timeout`` overrides ``code_execution.timeout``.
        """
        with self.turn(profile, session, context) as scope:
            return self.kernels.execute(scope, code, reset=reset, timeout=timeout, run_id=run_id)

    def _kernel_command(
        self,
        scope: ProfileScope,
        command: str,
        run_id: str | None,
        tracker: ProcessTracker,
        timeout: float | None,
    ) -> RunResult:
        # A cell's shell request: the gate and execution of any command, under the cell's scope.
        return self._run_in(scope, command, run_id, tracker=tracker, timeout=timeout)
