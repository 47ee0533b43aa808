"""The session-kernel leak check (docs/audit.md, docs/kernels.md#isolation).

In two phases over the multiplexed supervisor: first every checked profile's
kernel stores that profile's canary mark in a variable; then every one of them
prints its variables, its environment, its cwd and its credential listing,
which are scanned for any OTHER profile's canaries. A kernel shared between
profiles, or one started with another profile's env, cwd or credentials, shows
up as a ``kernel`` leak. Starting a kernel costs about a second, so at most
:data:`KERNEL_SAMPLE` profiles (of the local backend: only it runs kernels)
are checked; the notes say which were not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from multiplex.audit._canaries import Canaries
from multiplex.audit._findings import Leak
from multiplex.audit._leaks import LeakCheck
from multiplex.supervision import Supervisor

__all__ = ["KERNEL_SAMPLE", "check_kernels"]

KERNEL_SAMPLE = 4
SESSION = "audit-kernels"
_VAR = "mx_audit_canary_mark"
_DUMP = (
    "import os\n"
    "_creds = os.environ.get('CREDENTIALS_DIRECTORY')\n"
    "print({k: repr(v) for k, v in globals().items() if k.startswith('mx_audit_')})\n"
    "print(dict(os.environ))\n"
    "print(os.getcwd())\n"
    "print(sorted(os.listdir(_creds)) if _creds else [])\n"
    "for _root, _dirs, _files in (os.walk(_creds) if _creds else ()):\n"
    "    for _name in _files:\n"
    "        print(open(os.path.join(_root, _name), errors='replace').read())\n"
)


def check_kernels(
    sup: Supervisor, names: Sequence[str], canaries: Mapping[str, Canaries]
) -> dict[str, LeakCheck]:
    """Kernel leaks and notes per checked profile (the kernels end afterwards)."""
    # Only the local backend runs kernels (docs/kernels.md#environment).
    local = [n for n in sorted(names) if n in canaries and sup.view(n).backend == "local"]
    checked = local[:KERNEL_SAMPLE]
    found = {n: LeakCheck() for n in checked}
    skipped = [n for n in names if n not in checked]
    if skipped and checked:
        found[checked[0]].notes.append(
            f"kernel checks ran for {len(checked)} of {len(names)} profiles "
            f"(at most {KERNEL_SAMPLE}); not checked: {', '.join(sorted(skipped)[:10])}"
            + (" ..." if len(skipped) > 10 else "")
        )
    if not checked:
        return found
    try:
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix="audit-kernels") as pool:
            # Phase 1 completes for every profile before any profile dumps (phase 2).
            seeds = pool.map(lambda n: _seed(sup, n, canaries[n]), checked)
            seeded = dict(zip(checked, seeds, strict=True))
            dumps = dict(
                zip(checked, pool.map(lambda n: _dump(sup, n, seeded[n]), checked), strict=True)
            )
    finally:
        for name in checked:
            sup.kernels.dispose_session(name, SESSION, "audit finished")
    for name, text in dumps.items():
        if text is None:
            continue
        for owner, canary in canaries.items():
            if owner == name:
                continue
            labels = canary.found_in(text)
            if labels:
                found[name].leaks.append(
                    Leak(
                        "kernel",
                        name,
                        "session kernel",
                        f"{', '.join(labels)} of profile {owner!r} seen in its session kernel",
                        owner,
                        "multiplexed",
                    )
                )
    for name in checked:
        if not seeded[name]:
            found[name].notes.append(
                f"{name}: its session kernel did not run; kernel check skipped"
            )
        elif dumps[name] is not None and canaries[name].mark not in str(dumps[name]):
            found[name].notes.append(f"{name}: its own canary mark is not in its session kernel")
    return found


def _seed(sup: Supervisor, name: str, own: Canaries) -> bool:
    cell = sup.execute_code(
        f"{_VAR}_{hashlib.sha256(name.encode()).hexdigest()[:12]} = {own.mark!r}",
        profile=name,
        session=SESSION,
        context="cron",
    )
    return cell.outcome == "ok"


def _dump(sup: Supervisor, name: str, seeded: bool) -> str | None:
    if not seeded:
        return None
    cell = sup.execute_code(_DUMP, profile=name, session=SESSION, context="cron")
    if cell.outcome != "ok":
        return None
    return cell.stdout
