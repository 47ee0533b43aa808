"""Deny rules by meaning, not spelling (docs/allowlist.md#what-a-deny-rule-reaches).

Each example is blocked by its rule in every mode and past every bypass (deny is
checked before all of them); the siblings that mean something else are not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from multiplex import Outcome, Supervisor
from multiplex.shell import RuleSet, deny_match, parse_line
from multiplex.shell.rules import _meaning as meaning

RULES = [
    "npm publish *",
    "npm install *",
    "npm uninstall *",
    "npm test *",
    "npm run *",
    "npm exec *",
    "docker push *",
    "docker rm *",
    "docker image rm *",
    "docker build *",
    "docker-compose *",
    "python deploy.py *",
    "git push *",
    "kubectl delete *",
    "systemctl stop *",
    "rm -rf *",
    "terraform apply *",
    "rm -f *",
    "cargo publish *",
    "make deploy *",
    "aws s3 rm *",
]
BLOCKED = {
    "npm publish *": [
        "npx npm publish",
        "npx --yes npm pub",
        "pnpm publish",
        "yarn publish",
        "yarn npm publish",
        "bun publish",
        "npm pub",
        "npm publ",
        "npm publish --tag next",
        "npm --registry https://r.test pub",
        "npm -w pkg pu",
        "corepack npm publish",
        "corepack npm@10.2.0 publish",
        "corepack pnpm publish",
        "npx npm@10 publish",  # a package at a version is that program
        "npx --yes npm@latest pub",
        # release tools publish the packages to the registry as npm publish does
        "lerna publish from-package",
        "npx lerna publish --yes",
        "changeset publish",
        "npx changeset publish",
        "nx release publish",
        "nx release --yes",
        "nx release patch",
        "yarn workspace pkg npm publish",  # yarn CMD in a workspace
        "yarn workspaces foreach --all npm publish",
        "yarn workspaces foreach --include pkg-a -A npm publish",
        "nx release --projects app",
        "np --yolo",
        "release-it --ci",
        "semantic-release",
    ],
    "cargo publish *": ["cargo +nightly publish", "cargo +1.80 publish --allow-dirty"],
    "make deploy *": ["gmake deploy", "make -C infra deploy", "gmake -j4 deploy ENV=prod"],
    "npm install *": ["npm i left-pad", "npm add x", "npm isntall x", "npm in x", "npm inst x"],
    "npm uninstall *": ["npm rm x", "npm r x", "npm un x", "npm remove x", "npm unlink x"],
    "npm test *": ["npm t", "npm tst", "npm test -- -u"],
    "npm run *": ["npm run-script build", "npm rum build", "npm urn build", "npm runScript x"],
    "npm exec *": ["npm x cowsay", "npm exe cowsay"],
    "docker push *": [
        "docker image push img",
        "docker --context prod image push img",
        "podman push img",
        "nerdctl image push img",
    ],
    "docker rm *": ["docker container rm c", "docker container remove c"],
    "docker image rm *": ["docker rmi img", "docker image remove img"],
    "docker build *": ["docker builder build .", "docker buildx build .", "docker image build ."],
    "docker-compose *": ["docker compose up -d", "docker-compose down"],
    "python deploy.py *": [
        "pipx run deploy.py --prod",
        "pipx run ./deploy.py",
        "python ./deploy.py --prod",
        "python -X dev deploy.py",
        "python -Xdev deploy.py",
        "python -W ignore deploy.py",
        "python3 deploy.py",
        "python3.11 deploy.py",
        "/usr/bin/python3 -u deploy.py",
        "python -uB deploy.py",
        "python -- deploy.py",
        "python sub/../deploy.py",
        "python -m deploy",
        "./deploy.py --prod",
        "cat deploy.py | python",
        "cat ./deploy.py | python3 -u",
        "cat deploy.py | python -",
    ],
    "git push *": [
        "git send-pack origin main",
        "hub push origin main",
        "git subtree push --prefix=dist origin gh-pages",
        "git -C dir push",
        "git -c k=v push",
        "git --git-dir=x push",
        "git -c alias.p=push p origin main",
        "git -c alias.p='push --force' p",
        "git -calias.sync=push sync",
    ],
    "kubectl delete *": [
        "kubectl --context x delete pod y",
        "kubectl -n prod delete pod y",
        "oc delete pod y",
        "kubectl replace --force -f app.yaml",  # deletes, then creates
        "kubectl apply --prune -l app=web -f app/",  # deletes what app/ no longer holds
        "oc replace --force -f app.yaml",
    ],
    "terraform apply *": [
        "terraform -chdir=infra apply",
        "tofu apply -auto-approve",
        "terragrunt apply",
        "terragrunt run-all apply",
    ],
    "aws s3 rm *": [
        "aws s3 sync . s3://b --delete",  # removes what the source no longer holds
        "aws s3 sync --profile prod . s3://b --delete",  # an option's value is not a place
        "aws s3 sync --delete --no-cli-pager . s3://b",
        "aws s3 mv --profile p s3://b/x ./x",
        "aws --region eu-west-1 s3 sync ./site s3://b/www --delete --exact-timestamps",
        "aws s3 mv s3://b/x s3://c/x",  # the source object goes
        "aws s3 mv s3://b/logs/ ./logs --recursive",
        "aws s3api delete-object --bucket b --key x",
        "aws --region us-east-1 s3api delete-object --bucket=b --key=x",
        "aws s3api delete-objects --bucket b --delete 'Objects=[{Key=x}]'",
        "aws s3 rb s3://b --force",  # every object first, then the bucket
    ],
    "systemctl stop *": [
        "systemctl --now stop nginx",
        "systemctl -H host stop nginx",
        "service nginx stop",
        "/etc/init.d/nginx stop",
        "systemctl disable --now nginx",
    ],
    "rm -rf *": [
        "sudo rm -rf build",
        "sudo -u root rm -rf build",
        "env A=1 rm -rf build",
        "nice -n 5 rm -rf build",
        "timeout 5 rm -rf build",
        "echo build | xargs rm -rf",
        "rm -r -f build",
        "rm -fr build",
        "rm -Rf build",
        "rm --recursive --force build",
        "rm -rfv build",
        "rm -rf -- build",
        "rm -r build",  # nobody answers a prompt: -r removes what -rf does
        "find build -delete",
        "find . -name '*.o' -delete",
    ],
}
# Siblings that mean something else: not blocked by mistake.
NOT_BLOCKED = [
    "npm run publish-docs",  # a package script, not npm's publish command
    "npm p",  # ambiguous: pack, ping, pkg, prefix, profile, prune, publish
    "npm view left-pad",
    "npm ci",
    "docker image ls",
    "docker images",
    "docker container ls",
    "docker pull img",
    "python other.py --prod",
    "python deploy_test.py",
    "python -c 'print(1)' deploy.py",
    "python tools/deploy.py",
    "git pull",
    "git -c alias.p=pull p",
    "git subtree pull --prefix=dist origin main",
    "kubectl get pods",
    "cargo +nightly build",
    "gmake all",
    "kubectl apply -f app.yaml",
    "kubectl replace -f app.yaml",
    "cat other.py | python",
    "cat deploy.py | python -c 'print(1)'",
    "cat deploy.py | grep main",
    "systemctl status nginx",
    "systemctl disable nginx",
    "service nginx status",
    "rm build",
    "rm -i x",
    "find build -name x",
    "podman pull img",
    "terragrunt plan",
    "tofu plan",
    "npx prettier --write .",
    "pnpm install",
    "aws s3 rb s3://b",  # refused by S3 unless the bucket is empty: no object removed
    "aws s3api get-object --bucket b --key x out",
    "aws s3 ls s3://b",
    "nx release version 1.2.0",  # versions only
    "nx release changelog",
    "nx release plan minor",
    "yarn workspaces foreach --all run build",
    "yarn workspace pkg add lodash",
    "yarn workspaces list",
    "np --no-publish",
    "semantic-release -d",  # its dry run
    "lerna publish --help",
    "aws s3 sync . s3://b",  # without --delete nothing is removed
    "aws s3 sync s3://b ./backup --delete",  # removes local files, not objects
    "aws s3 mv ./x s3://b/x",  # the source is local
    "lerna run build",
    "changeset version",
    "nx build app",
    "np --preview",
    "release-it --dry-run",
    "semantic-release --dry-run",
    "npx prettier@3 --check .",
    "pipx run black .",
    "pipx run other.py",
]


def _deny(line: str, cwd: str | None = None, rules: list[str] = RULES) -> str | None:
    found = deny_match(RuleSet(rules, ignore_case_program=True), parse_line(line), cwd=cwd)
    return found[0] if found is not None else None


@pytest.mark.parametrize(
    ("rule", "line"), [(rule, line) for rule, lines in BLOCKED.items() for line in lines]
)
def test_each_spelling_is_blocked_by_its_rule(rule: str, line: str) -> None:
    assert _deny(line) == rule


@pytest.mark.parametrize("line", NOT_BLOCKED)
def test_a_sibling_that_means_something_else_is_not_blocked(line: str) -> None:
    # Without `npm run *`, which blocks every script by name.
    assert _deny(line, rules=[r for r in RULES if r != "npm run *"]) is None


def test_a_rule_written_in_another_spelling_blocks_every_one() -> None:
    rules = RuleSet(["docker image push *", "npm i *", "python3 ./deploy.py *", "service x stop"])

    def deny(line: str) -> str | None:
        found = deny_match(rules, parse_line(line), cwd="/srv/app")
        return found[0] if found else None

    assert deny("docker push img") == "docker image push *"
    assert deny("npm install left-pad") == "npm i *"
    assert deny("npm add left-pad") == "npm i *"
    assert deny("python /srv/app/deploy.py") == "python3 ./deploy.py *"
    assert deny("systemctl stop x.service") == "service x stop"


@pytest.mark.parametrize(
    ("line", "blocked"),
    [
        ("docker compose -f prod.yml down", True),
        ("docker compose --project-name x down -v", True),
        ("docker compose -p x --profile web down", True),
        ("podman-compose down", True),
        ("podman compose -f x.yml down", True),
        ("docker-compose -f x.yml down", True),
        ("docker compose up -d", False),
        ("docker compose -f x.yml up", False),
        ("docker compose -f down.yml up", False),
    ],
)
def test_compose_options_before_the_verb_are_skipped(line: str, blocked: bool) -> None:
    rules = ["docker compose down *"]
    assert (_deny(line, rules=rules) == "docker compose down *") is blocked


def test_a_mirror_push_is_a_force_push() -> None:
    # git push --mirror updates every remote ref to the local one, forcing where needed.
    rules = ["git push --force *"]
    assert _deny("git push --mirror", rules=rules) == "git push --force *"
    assert _deny("git push --mirror backup", rules=rules) == "git push --force *"
    assert _deny("git push origin main", rules=rules) is None


def test_an_absolute_path_to_the_script_in_the_cwd() -> None:
    assert _deny("python /srv/app/deploy.py --prod", cwd="/srv/app") == "python deploy.py *"
    assert _deny("python /srv/app/./deploy.py", cwd="/srv/app/") == "python deploy.py *"
    assert _deny("python /srv/other/deploy.py", cwd="/srv/app") is None
    assert _deny("python /srv/app/deploy.py") is None  # no cwd: not the same file


MODES = {
    "manual": "",
    "strict": "  mode: strict\n",
    "smart": "  mode: smart\n",
    "off": "  mode: off\n",
    "yolo": "  yolo: true\n",
}
EXAMPLES = [
    ("npm publish *", "npm pub"),
    ("npm publish *", "npm publ"),
    ("docker push *", "docker image push img"),
    ("python deploy.py *", "python ./deploy.py --prod"),
    ("python deploy.py *", "python -X dev deploy.py"),
    ("python deploy.py *", "python -W ignore deploy.py"),
    ("python deploy.py *", "python3 deploy.py"),
    ("python deploy.py *", "python3.11 deploy.py"),
    ("python deploy.py *", "python -u deploy.py"),
    ("python deploy.py *", "python -- deploy.py"),
    ("python deploy.py *", "python {cwd}/deploy.py"),
    ("git push *", "git send-pack origin main"),
    ("git push *", "git subtree push"),
    ("git push *", "git -C dir push"),
    ("git push *", "git -c k=v push"),
    ("git push *", "git --git-dir=x push"),
    ("git push *", "git -c alias.p=push p"),
    ("kubectl delete *", "kubectl --context x delete pod y"),
    ("systemctl stop *", "systemctl --now stop nginx"),
    ("systemctl stop *", "systemctl -H host stop nginx"),
    ("systemctl stop *", "service nginx stop"),
]


@pytest.fixture(params=sorted(MODES))
def sup(request, make_home, supervisor_of) -> Supervisor:  # type: ignore[no-untyped-def]
    # Every bypass at once where the mode allows: an allow rule for each program,
    # and (in the container run) a sealed backend.
    allow = ["npm *", "docker *", "python *", "python3 *", "python3.11 *", "git *"]
    allow += ["kubectl *", "systemctl *", "service *"]
    deny = sorted({rule for rule, _ in EXAMPLES})
    make_home(
        "p",
        f"terminal:\n  cwd: work\ncommand_allowlist: {allow!r}\n"
        f"approvals:\n{MODES[request.param]}  deny: {deny!r}\n",
        files={"work/deploy.py": "print('deploying')\n"},
    )
    return supervisor_of("profiles_dir: profiles\ndefault_profile: p\n")  # type: ignore[no-any-return]


@pytest.mark.parametrize(("rule", "line"), EXAMPLES)
def test_blocked_in_every_mode(sup: Supervisor, rule: str, line: str) -> None:
    cwd = Path(sup.profiles["p"].home) / "work"
    line = line.format(cwd=cwd)
    verdict = sup.test("p", line)
    assert verdict.outcome == "blocked", (line, verdict.trace)
    assert verdict.rule == rule and verdict.decided_by == "rule", verdict.as_dict()


def test_a_run_is_blocked_before_it_starts(sup: Supervisor) -> None:
    cwd = Path(sup.profiles["p"].home) / "work"
    result = sup.run(f"python3 {cwd}/deploy.py --prod", profile="p", context="api")
    assert result.decision.outcome is Outcome.BLOCKED and result.exit_code is None
    assert result.decision.rule == "python deploy.py *"


def test_in_a_container_without_host_access(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("c", "terminal:\n  backend: docker\napprovals:\n  deny: ['npm publish *']\n")
    sup = supervisor_of("profiles_dir: profiles\ndefault_profile: c\n")
    assert sup.test("c", "npm pub").outcome == "blocked"
    assert sup.test("c", "npm run publish-docs").outcome == "approved"


@pytest.mark.parametrize(
    "line",
    [
        "docker buildx build --push -t img .",
        "docker build --push -t img .",
        "docker buildx bake --push",
        "docker build --output=type=registry -t img .",
        "docker compose push",
        "docker-compose push web",
        "npm exec -- npm publish",
        "npm x -- npm publish",
    ],
)
def test_a_build_that_pushes_and_a_runner_are_what_they_run(line: str) -> None:
    rules = ["docker push *", "npm publish *"]
    assert _deny(line, rules=rules) in rules
    assert _deny("docker buildx build -t img .", rules=rules) is None
    assert _deny("npm exec -- eslint .", rules=rules) is None


def _corpus_argvs() -> list[tuple[str, ...]]:
    lines = [*NOT_BLOCKED, *(line for lines in BLOCKED.values() for line in lines)]
    lines += [line for _, line in EXAMPLES] + RULES
    for name in ("tests/shell/corpus/bypass_deny.tsv", "tests/approval/corpus/deny_options.tsv"):
        text = (Path(__file__).resolve().parents[2] / name).read_text()
        lines += [row.split("\t")[-1] for row in text.splitlines() if row and row[0] != "#"]
    lines += [f"{program} {tail}" for program in _PROGRAMS for tail in _TAILS]
    argvs = {a: None for line in lines for a in parse_line(line).match_argvs()}
    return list(argvs)


# Programs every table of meanings() names, spelled as a command may, and some none names.
_PROGRAMS = [
    *sorted(meaning._NAMED), "Git", "PODMAN", "/usr/bin/git", "/etc/init.d/nginx", "python3.12",
    "pip3.11", "./deploy.py", "pypy3", "ls", "cat", "make", "rsync", "helm", "gh", "service",
]  # fmt: skip
_TAILS = [
    "push origin main", "--force push", "-C x push", "image push img", "rm -fr /", "publish",
    "pub", "+nightly publish", "x -delete", "-m pip uninstall x", "restart nginx", "delete pod x",
    "apply -destroy", "exec -- rm -rf /", "run-all destroy", "copy a docker://b", "pip uninstall x",
    "compose -f p.yml down", "stage .", "send-pack origin", "del x", "release new v1",
    "s3api delete-object --bucket b --key k", "s3 rb s3://b --force", "",
]  # fmt: skip


def test_meanings_fast_routes_give_what_every_branch_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # meanings() routes a program only its verb tables read straight there, and answers ()
    # at once for one no table names: the same answers as asking every branch in turn.
    argvs = _corpus_argvs()
    assert len(argvs) > 600
    fast = {a: meaning.meanings(a, cwd="/w", takes=frozenset()) for a in argvs}
    fast_rules = {a: meaning.meanings(a, cwd="/w", takes=frozenset(), rule=True) for a in argvs}

    class Everything(frozenset[str]):
        def __contains__(self, item: object) -> bool:
            return True

    monkeypatch.setattr(meaning, "_VERBS_ONLY", frozenset())
    monkeypatch.setattr(meaning, "_NAMED", Everything())
    for argv in argvs:
        assert meaning.meanings(argv, cwd="/w", takes=frozenset()) == fast[argv], argv
        assert meaning.meanings(argv, cwd="/w", takes=frozenset(), rule=True) == fast_rules[argv]


def test_a_compose_build_that_pushes_is_a_push() -> None:
    assert _deny("docker compose build --push", rules=["docker push *"]) == "docker push *"
    assert _deny("docker compose -f prod.yml build --push web", rules=["docker push *"])
    assert _deny("docker compose build", rules=["docker push *"]) is None
