"""docs/multiplexing.md: every turn sees only its own profile, whatever runs it (property test)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from multiplex import (
    ProfileScope,
    ScopedExecutor,
    Supervisor,
    UnscopedAccessError,
    current_scope,
    run_in_scope,
)
from tests.conftest import write_home
from tests.strategies import profile_config, turn_plans

N_PROFILES = 50


@pytest.fixture(scope="module")
def sup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
    root = tmp_path_factory.mktemp("iso")
    rng = random.Random(20261129)
    configs = [
        profile_config(
            i,
            rng.choice(["local", "local", "docker", "ssh"]),
            rng.random() < 0.5,
            [f"r{rng.randrange(99)}"],
        )
        for i in range(N_PROFILES)
    ]
    for i, text in enumerate(configs):
        write_home(
            root / "profiles",
            f"p{i}",
            text,
            env=f"SECRET_TOKEN_{i}=canary-secret-value-{i:04d}\n",
            files={
                f"credentials/token-{i}.txt": f"canary-credential-{i:04d}-abcdef\n",
                f"work-{i}/.keep": "",
            },
        )
    config = root / "multiplex.yaml"
    config.write_text("profiles_dir: profiles\ndefault_profile: null\n")
    supervisor = Supervisor.from_config(config)
    yield supervisor
    supervisor.close()


def expect(sup: Supervisor, name: str) -> None:
    """Assert that the bound scope is ``name``'s, on every surface."""
    scope = current_scope()
    profile = sup.profiles[name]
    index = name[1:]
    assert scope.name == name
    assert scope.home == profile.home
    if scope.backend == "local":
        assert scope.cwd == profile.home / f"work-{index}"
    assert scope.env["PROFILE_INDEX"] == index
    assert all(m.source.is_relative_to(profile.home) for m in scope.credential_mounts)
    assert [m.source.name for m in scope.credential_mounts] == [f"token-{index}.txt"]
    assert scope.redact_secrets == profile.state.settings.security.redact_secrets
    assert scope.allowlist is profile.allowlist
    cache = scope.cache("lsp")
    assert cache.home == profile.home and cache is scope.cache("lsp")
    cache[name] = index
    assert set(cache) == {name}
    # Another profile's secret is masked here whatever this profile's switch says.
    other = (int(index) + 1) % N_PROFILES
    assert f"canary-secret-value-{other:04d}" not in scope.redact(
        f"x canary-secret-value-{other:04d} y"
    )


def run_plan(sup: Supervisor, plan: list[tuple[int, str]], pool: ScopedExecutor) -> None:
    futures: list[concurrent.futures.Future[None]] = []

    async def in_tasks(turns: list[str]) -> None:
        async def one(name: str) -> None:
            async with sup.turn(name, session=f"s-{name}") as scope:
                await asyncio.sleep(0)
                expect(sup, name)
                # A task created inside the turn inherits it.
                await asyncio.create_task(asyncio.to_thread(run_in_scope(expect, sup, name)))
                assert current_scope() is scope

        await asyncio.gather(*(one(n) for n in turns))

    tasks: list[str] = []
    for index, how in plan:
        name = f"p{index}"
        if how == "task":
            tasks.append(name)
            continue
        with sup.turn(name) as scope:
            if how == "inline":
                expect(sup, name)
            elif how == "thread":
                futures.append(pool.submit(expect, sup, name))
            elif how == "map":
                list(pool.map(lambda _i, n=name: expect(sup, n), range(3)))
            elif how == "child":
                child_name = f"p{(index + 7) % N_PROFILES}"
                with sup.turn(child_name) as child:
                    assert child.parent is scope
                    expect(sup, child_name)
                    futures.append(pool.submit(expect, sup, child_name))
                assert current_scope() is scope
                expect(sup, name)
    asyncio.run(in_tasks(tasks))
    for future in futures:
        future.result(timeout=30)


@pytest.mark.slow
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=turn_plans(N_PROFILES, max_turns=400, min_turns=150))
def test_interleaved_turns_see_only_their_own_profile(
    sup: Supervisor, plan: list[tuple[int, str]]
) -> None:
    with ScopedExecutor(max_workers=8) as pool:
        run_plan(sup, plan, pool)
    with pytest.raises(UnscopedAccessError):
        current_scope()


def test_plain_thread_pool_gets_unscoped_error_not_another_profile(sup: Supervisor) -> None:
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as plain, sup.turn("p1"):
        future = plain.submit(current_scope)
        with pytest.raises(UnscopedAccessError):
            future.result(timeout=10)


def test_scope_is_immutable_and_restored(sup: Supervisor) -> None:
    with sup.turn("p2") as outer:
        with pytest.raises(AttributeError):
            outer.session = "other"  # type: ignore[misc]
        with sup.turn("p3") as inner:
            assert current_scope() is inner and inner.parent is outer
        assert current_scope() is outer
    with pytest.raises(UnscopedAccessError):
        current_scope()


def test_executor_uses_the_submitters_scope_not_the_workers_last(sup: Supervisor) -> None:
    seen: list[str] = []
    with ScopedExecutor(max_workers=1) as pool:
        for name in ("p4", "p5", "p4"):
            with sup.turn(name):
                pool.submit(lambda: seen.append(current_scope().name)).result()
        # Submitted outside any turn: the worker must not reuse the last scope.
        with pytest.raises(UnscopedAccessError):
            pool.submit(current_scope).result()
    assert seen == ["p4", "p5", "p4"]


def test_async_turns_restore_across_awaits(sup: Supervisor) -> None:
    async def main() -> list[str]:
        async def one(name: str) -> str:
            async with sup.turn(name) as scope:
                for _ in range(5):
                    await asyncio.sleep(0)
                    assert current_scope() is scope
                return current_scope().name

        return list(await asyncio.gather(*(one(f"p{i}") for i in range(20))))

    assert asyncio.run(main()) == [f"p{i}" for i in range(20)]


def test_scope_has_spec_fields(sup: Supervisor) -> None:
    with sup.turn("p6", session="s1", context="cron") as scope:
        assert isinstance(scope, ProfileScope)
        assert (scope.session, scope.context.value) == ("s1", "cron")
        assert scope.turn_id and scope.epoch >= 1
        assert isinstance(scope.home, Path)
