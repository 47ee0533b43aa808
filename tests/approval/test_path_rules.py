"""A rule naming a program's path covers that path (docs/allowlist.md#what-an-allow-rule-never-covers).

``./gradlew *`` approved nothing before: a path-qualified program outside the
standard folders was never covered, even by a rule naming that very path. A rule
naming the bare name still never covers a path (``./ls`` under ``ls *``), and a
relative path counts only where the turn works: a line that changes folder runs
another file of that name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from multiplex import Supervisor
from tests.conftest import write_home

RULES = ["./gradlew *", "./mvnw", "./scripts/test.sh", "/opt/tools/run *", "ls *", "python *"]


@pytest.fixture(scope="module")
def sup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Supervisor]:
    root = tmp_path_factory.mktemp("path_rules")
    home = {"approvals": {"mode": "strict"}, "command_allowlist": RULES}
    write_home(root / "profiles", "p", yaml.safe_dump(home))
    (root / "multiplex.yaml").write_text("profiles_dir: profiles\ndefault_profile: null\n")
    with Supervisor.from_config(root / "multiplex.yaml") as supervisor:
        yield supervisor


@pytest.mark.parametrize(
    "line",
    ["./gradlew build", "./gradlew test --info", "./mvnw", "./scripts/test.sh",
     "/opt/tools/run nightly", "./gradlew build && ls build"],
)  # fmt: skip
def test_a_rule_naming_the_path_covers_it(sup: Supervisor, line: str) -> None:
    verdict = sup.test("p", line, context="api")
    assert verdict.outcome.value == "approved", verdict.cause


@pytest.mark.parametrize(
    "line",
    [
        "cd /tmp/evil && ./gradlew build",  # another folder's gradlew
        "pushd ../other; ./gradlew build",
        "./gradlew build; cd ..; ./gradlew build",
        "../gradlew build",
        "sub/../gradlew build",
        "./ls",  # a bare-name rule never covers a path
        "./python x.py",
        "/tmp/run nightly",
        "./gradlew build > out.txt",  # a write through a redirection never passes here
        "./mvnw deploy",  # the rule names no arguments
    ],
)
def test_anything_else_is_still_not_covered(sup: Supervisor, line: str) -> None:
    verdict = sup.test("p", line, context="api")
    assert verdict.outcome.value == "ask", verdict.cause
