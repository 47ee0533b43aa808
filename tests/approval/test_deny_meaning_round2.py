"""Deny rules by meaning, the second round (docs/allowlist.md#what-a-deny-rule-reaches).

git reads a subcommand's options anywhere before ``--``, takes a unique prefix of
a long one and has short spellings (``reset HEAD~1 --hard``, ``reset --har``,
``push -f``, ``push origin +main``, ``branch -d -f``); a script fed to python on
stdin is the script it runs; pip under another name or as a module is pip, and a
tool run as a module (``python -m twine``) is that tool; helm's and gh's own verb
aliases; ``terraform apply -destroy`` is ``terraform destroy``, as terragrunt's verbs
are terraform's; PyPy is python, and ``runpy.run_path`` runs its script. Each blocked line
passed its rule on the code before; the siblings that mean something else stay
unblocked.
"""

from __future__ import annotations

import pytest

from multiplex.shell import RuleSet, deny_match, parse_line

RULES = [
    "docker push *",
    "git push --force *",
    "git reset --hard *",
    "git branch -D *",
    "git clean -f *",
    "python deploy.py *",
    "pip uninstall *",
    "twine upload *",
    "helm uninstall *",
    "gh release create *",
    "terraform destroy *",
]
BLOCKED = {
    # other clients of the same registries push images too
    "docker push *": [
        "buildah push img",
        "skopeo copy docker-daemon:img docker://r/img",
        "crane push img.tar r/img",
        "docker manifest push r/img",
    ],
    "git push --force *": [
        "git push origin main --force",
        "git push -f origin main",
        "git push origin +main",
        "git push --force-with-lease origin main",
        "git push --force-with-lease=main:abc origin main",
        "git -C repo push -u origin main -f",
    ],
    "git reset --hard *": [
        "git reset HEAD~1 --hard",
        "git reset --har HEAD~1",
        "git reset --ha",
        "git reset -q --hard",
        "git reset --quiet HEAD --hard",
    ],
    "git branch -D *": ["git branch --delete --force x", "git branch -d -f x", "git branch -df x"],
    "git clean -f *": [
        "git clean -fdx",
        "git clean -xdf",
        "git clean --force -d",
        "git clean -d --forc",
    ],
    "python deploy.py *": [
        "python - < deploy.py",
        "python < deploy.py",
        "python3 -u - < deploy.py --prod",
        "python3 -u - --prod < deploy.py",
        # PyPy takes CPython's options; runpy runs the file as a script
        "pypy3 deploy.py",
        "pypy -u deploy.py --prod",
        "python -c 'import runpy; runpy.run_path(\"deploy.py\")'",
    ],
    "pip uninstall *": [
        "pip3 uninstall -y x",
        "pip3.12 uninstall x",
        "python -m pip uninstall x",
        "python3 -m pip uninstall x",
        "uv pip uninstall x",
    ],
    "twine upload *": ["python -m twine upload dist/*", "python3 -m twine upload dist/*"],
    "helm uninstall *": ["helm del x", "helm delete x", "helm un x", "helm -n prod del x"],
    "gh release create *": ["gh release new v1"],
    "terraform destroy *": [
        "terraform apply -destroy",
        "terraform -chdir=infra apply -destroy -auto-approve",
        "tofu apply -destroy",
        # terragrunt runs terraform's verb, also across modules
        "terragrunt destroy",
        "terragrunt run-all destroy",
        "terragrunt run --all destroy",
        "terragrunt apply -destroy",
    ],
}
NOT_BLOCKED = [
    "git push origin main",
    "git push --for origin main",  # ambiguous for git: --force, --force-with-lease, ...
    "git commit -m 'push --force'",
    "git reset --soft HEAD~1",
    "git reset HEAD~1",
    "git branch -d x",
    "git clean -n",
    "python - < other.py",
    "python -c 'print(1)' < deploy.py",
    "pip install x",
    "python -m pip install x",
    "python -m twine check dist/*",
    "helm list",
    "helm ls",
    "gh release view v1",
    "terraform apply",
    "terraform plan -destroy",
    "terragrunt plan",
    "skopeo copy docker://r/img oci:x",
    "skopeo inspect docker://r/img",
    "crane pull r/img x.tar",
    "pypy3 other.py",
]


CASES = [(line, rule) for rule, lines in BLOCKED.items() for line in lines]
CASES += [(line, None) for line in NOT_BLOCKED]


@pytest.mark.parametrize(("line", "rule"), CASES)
def test_the_rule_a_line_meets_is_the_one_it_means(line: str, rule: str | None) -> None:
    """Blocked by the rule it means, or (a sibling that means something else) by none."""
    found = deny_match(RuleSet(RULES, ignore_case_program=True), parse_line(line), cwd=None)
    assert (found[0] if found is not None else None) == rule


def test_a_rule_in_a_short_spelling_blocks_the_long_one() -> None:
    rules = RuleSet(["git push -f *", "helm del *", "pip3 uninstall *"], ignore_case_program=True)
    for line, rule in (
        ("git push --force origin", "git push -f *"),
        ("helm uninstall x", "helm del *"),
        ("pip uninstall x", "pip3 uninstall *"),
    ):
        found = deny_match(rules, parse_line(line), cwd=None)
        assert found is not None and found[0] == rule, line
