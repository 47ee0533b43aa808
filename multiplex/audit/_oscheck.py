"""OS-level isolation checks (docs/audit.md#os-level-checks, docs/execution.md#the-sandbox).

From inside profile A's own sandbox, past the gate (which already refuses a
command naming another home): every other profile's canary credential file
and ``.env`` must be unreadable, and A's writes outside its writable paths
(its home, the profiles folder) must fail. A profile whose commands do not run
in bubblewrap gets a note that these checks were skipped, never a pass.
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Mapping

from multiplex.audit._canaries import Canaries
from multiplex.audit._findings import Leak
from multiplex.audit._leaks import LeakCheck
from multiplex.execution import WORKSPACE, execute, sandbox_of
from multiplex.supervision import Supervisor

__all__ = ["check_os"]


def check_os(sup: Supervisor, name: str, canaries: Mapping[str, Canaries]) -> LeakCheck:
    """The sandbox checks for profile ``name``: foreign canaries unreadable, stray writes refused."""
    found = LeakCheck()
    view = sup.view(name)
    sandbox, warning = sandbox_of(view.backend, view.terminal.sandbox)
    if sandbox != "bwrap":
        why = warning or f"backend {view.backend}, sandbox {sandbox}"
        found.notes.append(f"{name}: OS-level checks skipped ({why})")
        return found
    own = sup.profiles[name].home / WORKSPACE  # made by the first command
    if view.cwd is not None and view.cwd != own and not view.cwd.is_dir():
        # No command of this profile can start (its cwd is missing): unknown, not passed.
        found.notes.append(f"{name}: OS-level checks skipped (its cwd does not exist)")
        return found
    home = sup.profiles[name].home
    probe = f".multiplex-audit-write-{secrets.token_hex(6)}"
    targets = [home.parent / probe, home / "logs" / probe]
    if (
        view.cwd is not None
        and view.cwd.resolve() != home.resolve()
        and not view.terminal.writable_paths
    ):
        targets.append(home / probe)  # the home itself is not writable in this profile
    lines = []
    for other, canary in canaries.items():
        if other != name and other in sup.profiles:
            for path in (
                sup.profiles[other].home / canary.cred_relative,
                sup.profiles[other].home / ".env",
            ):
                lines.append(f"cat {shlex.quote(str(path))} 2>/dev/null")
    lines += [f"echo x > {shlex.quote(str(t))} 2>/dev/null" for t in targets]
    with sup.turn(name, session="audit-os", context="cron") as scope:
        done = execute(scope, "\n".join(lines) + "\ntrue", hidden=sup.hidden_paths)
    if done.error is not None:
        found.leaks.append(
            Leak("error", name, "sandbox", f"the sandbox check did not run: {done.error}")
        )
        return found
    for other, canary in canaries.items():
        if other != name and (labels := canary.found_in(done.stdout)):
            detail = f"{', '.join(labels)} of profile {other!r} readable inside {name!r}'s sandbox"
            found.leaks.append(Leak("sandbox", name, "sandbox read", detail, other))
    for target in targets:
        if target.exists():
            target.unlink()
            found.leaks.append(
                Leak(
                    "sandbox",
                    name,
                    "sandbox write",
                    f"a write to {target} succeeded from its sandbox",
                )
            )
    return found
