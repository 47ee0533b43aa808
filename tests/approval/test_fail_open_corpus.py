"""Issue 10's corpora through the whole gate, in four profiles (docs/security.md).

Each line of ``tests/approval/corpus/*.tsv`` carries the outcome it must get in
``manual`` (mode manual, local), ``off`` (mode off + yolo + docker backend: hardline,
deny and another profile's home must still hold), ``allow`` (mode strict with an
allowlist: only clean allowlisted commands pass) and ``cron`` (a cron turn with
``unattended: deny``). Every profile works in ``<home>/work`` and has the same deny
rules; a sibling profile ``ci-bot`` holds credentials.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from multiplex import Supervisor
from tests.conftest import write_home

CORPUS = Path(__file__).parent / "corpus"
PROFILES = ("manual", "off", "allow", "cron")
DENY = [
    "git push *",
    "systemctl stop *",
    "kubectl delete *",
    "docker rm *",
    "npm publish *",
    "helm uninstall *",
    "curl *",
]
ALLOW = [
    "ls *", "cat *", "git log *", "echo *", "find *", "sort *", "tar *", "rsync *",
    "sed *", "awk *", "xargs *",
]  # fmt: skip
CONFIGS = {
    "manual": {},
    "off": {"approvals": {"mode": "off", "yolo": True}, "terminal": {"backend": "docker"}},
    "allow": {"approvals": {"mode": "strict"}, "command_allowlist": ALLOW},
    "cron": {"approvals": {"unattended": "deny"}},
}
CONTEXT = {"manual": "api", "off": "api", "allow": "api", "cron": "cron"}


def load(name: str) -> list[tuple[str, dict[str, str]]]:
    cases = []
    for raw in (CORPUS / name).read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            *outcomes, command = raw.split("\t")
            assert len(outcomes) == 4, raw
            cases.append((command, dict(zip(PROFILES, outcomes, strict=True))))
    return cases


FILES = sorted(p.name for p in CORPUS.glob("*.tsv"))
CASES = [(f, command, expected) for f in FILES for command, expected in load(f)]


@pytest.fixture(scope="module")
def sup(tmp_path_factory: pytest.TempPathFactory) -> Supervisor:
    root = tmp_path_factory.mktemp("fail-open")
    for name, doc in CONFIGS.items():
        approvals = {**doc.get("approvals", {}), "deny": DENY}
        terminal = {**doc.get("terminal", {}), "cwd": "work"}
        config = yaml.safe_dump({**doc, "approvals": approvals, "terminal": terminal})
        write_home(root / "profiles", name, config, files={"work/README.md": "x\n"})
    write_home(root / "profiles", "ci-bot", "", files={"credentials/registry.json": "{}\n"})
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    supervisor = Supervisor.from_config(root / "multiplex.yaml")
    yield supervisor
    supervisor.close()


def test_the_corpora_are_large_enough() -> None:
    assert len(FILES) >= 6
    assert len(CASES) >= 150


@pytest.mark.parametrize(("corpus", "command", "expected"), CASES)
def test_outcome_in_every_profile(
    sup: Supervisor, corpus: str, command: str, expected: dict[str, str]
) -> None:
    got = {
        profile: sup.test(profile, command, context=CONTEXT[profile]).outcome.value
        for profile in PROFILES
    }
    assert got == expected, [t.as_dict() for t in sup.test("manual", command).trace]


def test_another_profiles_home_is_never_named(sup: Supervisor) -> None:
    for command in ("cat ../../ci-bot/credentials/registry.json", "ls ../../*/credentials"):
        verdict = sup.test("manual", command)
        assert verdict.outcome.value == "blocked"
        assert verdict.cause == "another profile's home"
        shown = " ".join(t.detail for t in verdict.trace)
        assert "ci-bot" not in shown and "ci-bot" not in verdict.cause


def test_ssh_is_a_real_host(tmp_path: Path) -> None:
    """Issue 10: ssh was treated as a sealed container; it reaches a real host."""
    write_home(tmp_path / "profiles", "remote", "terminal:\n  backend: ssh\n")
    write_home(
        tmp_path / "profiles",
        "cron",
        "terminal:\n  backend: ssh\napprovals:\n  unattended: deny\n",
    )
    write_home(tmp_path / "profiles", "boxed", "terminal:\n  backend: docker\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    with Supervisor.from_config(tmp_path / "multiplex.yaml") as sup:
        for command in ("rm -rf /var/lib/postgresql/data", "systemctl stop nginx"):
            manual = sup.test("remote", command)
            assert manual.outcome.value == "ask", manual.trace
            assert all("without host access" not in t.detail for t in manual.trace)
            assert sup.test("cron", command, context="cron").outcome.value == "blocked"
            assert sup.test("boxed", command).outcome.value == "approved"  # sealed container
        restart = sup.test("remote", "systemctl restart nginx")
        assert restart.cause == "nothing dangerous detected"  # judged, not skipped


def test_named_patterns_are_counted_in_metrics(sup: Supervisor) -> None:
    from prometheus_client import generate_latest

    decision = sup.run("cat ~/.ssh/id_rsa", profile="cron", context="cron")
    assert decision.decision.outcome.value == "blocked"
    text = generate_latest(sup.metrics.registry).decode()
    assert (
        'multiplex_gate_patterns_total{outcome="blocked",pattern="secret-read",profile="cron"}'
        in text
    )


def test_hardline_causes_name_the_pattern(sup: Supervisor) -> None:
    for command, name in (
        ("rm -rf ${HOME:-/}", "delete-system"),
        ("mv ~ /var/tmp/gone", "system-target"),
        ("echo b > /proc/sysrq-trigger", "sysrq-trigger"),
        ("wipefs -a /dev/sda", "block-device-write"),
    ):
        verdict = sup.test("off", command)
        assert verdict.outcome.value == "blocked"
        assert verdict.cause.startswith(f"hardline: {name}: "), verdict.cause


def test_the_cwd_at_home_makes_dot_and_pwd_hardline(tmp_path: Path) -> None:
    """Issue 10: ``rm -rf $PWD`` and ``rm -rf .`` with the cwd at HOME passed in mode off."""
    write_home(tmp_path / "profiles", "athome", "approvals:\n  mode: off\nterminal:\n  cwd: '~'\n")
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    with Supervisor.from_config(tmp_path / "multiplex.yaml") as sup:
        for command in ("rm -rf $PWD", "rm -rf .", "rm -rf *", "find . -delete", "rm -rf ./"):
            verdict = sup.test("athome", command)
            assert verdict.outcome.value == "blocked", (command, verdict.cause)
        assert sup.test("athome", "rm -rf build").outcome.value == "approved"
