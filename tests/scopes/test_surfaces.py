"""docs/multiplexing.md#the-model: every per-profile resource is reached through a registered surface."""

from __future__ import annotations

import gc

from multiplex import Supervisor
from multiplex.profiles import Profile
from multiplex.scopes import SURFACES

REQUIRED_SURFACES = {
    "cwd",
    "env",
    "redact_secrets",
    "credential_mounts",
    "allowlist",
    "deny",
    "approval_mode",
    "unattended",
    "yolo",
    "session_grants",
    "caches",
    "logs_dir",
    "epoch",
    "backend",
}


def _exercise(sup: Supervisor) -> None:
    """Touch every per-profile surface the library has: turns, caches, gate, sessions."""
    from multiplex.approval.waiting._pending import Answer, Choice

    for name in sup.profiles:
        with sup.turn(name, session="s1", context="cron") as scope:
            scope.cache("lsp")["x"] = 1
            scope.cache("symbols")
            sup.test(name, "rm -rf build")
            sup.run("true", profile=name, session="s1", context="cron")
    sup.gate.sessions(sup.profiles["a"]).grant("s1", ["git status"])
    sup.gate.pending(sup.profiles["a"])
    sup.reset_session("a", "s1")
    assert Answer(Choice.ONCE)


def test_every_per_profile_resource_has_an_owning_surface(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a", "command_allowlist: ['true']\n")
    make_home("b", "command_allowlist: ['true']\n")
    sup = supervisor_of()
    _exercise(sup)
    # Every resource any Profile object owns must be accounted for by a surface.
    for obj in gc.get_objects():
        if isinstance(obj, Profile):
            for key in obj.resource_keys:
                assert SURFACES.owner_of(key) is not None, (
                    f"per-profile resource {key!r} has no surface"
                )


def test_spec_surfaces_are_registered() -> None:
    import multiplex.approval

    multiplex.approval.Gate  # noqa: B018  (registers the approval surfaces)
    assert set(SURFACES.names()) >= REQUIRED_SURFACES


def test_unregistered_resource_is_detected(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("a")
    sup = supervisor_of()
    sup.profiles["a"].resource("kernels:python", lambda _p: object())
    keys = sup.profiles["a"].resource_keys
    assert any(SURFACES.owner_of(k) is None for k in keys)  # the check above would fail


def test_render_all_is_json_and_per_profile(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    import json

    make_home("a", "terminal:\n  env: {X: a}\n")
    make_home("b", "terminal:\n  env: {X: b}\n")
    sup = supervisor_of()
    with sup.turn("a") as scope:
        ra = SURFACES.render_all(scope)
    with sup.turn("b") as scope:
        rb = SURFACES.render_all(scope)
    json.dumps(ra)
    assert ra["env"]["X"] == "a" and rb["env"]["X"] == "b"
    assert ra["home"] != rb["home"]
