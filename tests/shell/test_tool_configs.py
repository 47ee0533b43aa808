"""Tools told to load code from beyond the working folder (docs/allowlist.md#what-an-allow-rule-never-covers).

An allow rule for a build, lint or deploy tool vouches for the project's own files.
Each hostile line below named a file elsewhere that the tool runs or that loads code
(a JavaScript config, a plugin, an init script, a Maven extension, a post-renderer, a
kubeconfig's exec plugin, a Rakefile, a CMake script or compiler, a package, a hook
repository, a playbook) and was approved under the tool's rule; the same tools with
the project's own files stay approved.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import APPROVED, homes_fixture, outcome

_TOOLS = ["eslint", "prettier", "jest", "vitest", "webpack", "gradle", "mvn",
          "helm", "kubectl", "rake", "cmake", "tox", "pre-commit", "mypy", "ansible-playbook",
          "make"]  # fmt: skip
sup = homes_fixture("tool_configs", [f"{t} *" for t in _TOOLS])

ELSEWHERE = [
    "eslint -c /tmp/x.js .",
    "eslint --config=../other/.eslintrc.js .",
    "eslint --rulesdir /tmp/rules .",
    "prettier --plugin /tmp/x.js --write .",
    "jest --config /tmp/jest.config.js",
    "vitest --config ~/x.ts",
    "webpack -c /tmp/webpack.config.js",
    "gradle -I /tmp/init.gradle build",
    "gradle --init-script=/tmp/x.gradle build",
    "mvn -Dmaven.ext.class.path=/tmp/x.jar package",
    "mvn -s /tmp/settings.xml package",
    "helm install x ./chart --post-renderer /tmp/x",
    "kubectl --kubeconfig /tmp/kc get pods",
    "rake -f /tmp/Rakefile",
    "cmake -P /tmp/x.cmake",
    "cmake -DCMAKE_C_COMPILER=/tmp/cc .",
    "tox --installpkg /tmp/evil.whl",
    "pre-commit try-repo /tmp/evil",
    "pre-commit run --config /tmp/x.yaml",
    "mypy --config-file /tmp/x.ini .",
    "ansible-playbook /tmp/p.yml",
    "make -f /tmp/x.mk",
    "make --file=/tmp/x.mk all",
    "make --fil=/tmp/x.mk",
    "make -I /tmp/inc all",
]
OWN = [
    "eslint .",
    "eslint -c .eslintrc.js src",
    "prettier --check .",
    "jest --config jest.config.js",
    "gradle build",
    "mvn package",
    "helm install x ./chart",
    "kubectl get pods",
    "rake test",
    "cmake -DCMAKE_BUILD_TYPE=Release .",
    "tox",
    "pre-commit run --all-files",
    "mypy .",
    "ansible-playbook site.yml",
    "make -f Makefile.dev",
    "make -I include all",
]


@pytest.mark.parametrize("line", ELSEWHERE)
def test_code_from_beyond_the_working_folder_is_not_allowlisted(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) != APPROVED


@pytest.mark.parametrize("line", OWN)
def test_the_projects_own_files_stay_allowlisted(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) == APPROVED


def test_an_include_folder_is_not_a_target_make_writes(sup: Supervisor) -> None:
    verdict = sup.test("manual", "make -I /usr/include/x all", context="api")
    assert "sensitive-write" not in [d.pattern for d in verdict.dangers], verdict.as_dict()
