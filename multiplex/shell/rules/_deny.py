"""Deny rules that hold against global options (docs/allowlist.md#deny-rules-and-options).

A deny rule ``git push *`` also blocks ``git -C dir push``, ``git --git-dir=x
push`` and ``git -c k=v push``: before each literal word of the rule, option
words of the command (and the value of an option known to take one, from the
per-program table below) are skipped. Matching stays linear: each argv word is
looked at once per candidate rule, and candidate rules are found by program name;
a spelling that holds none of its program's rules' first literal words (each must
equal a word of it) is not matched at all.
Commands inside inline scripts (``python -c 'os.system("curl …")'``) are matched
too. A rule also holds against other spellings of the same action
(``npm pub``, ``docker image push``, ``python -u ./deploy.py``, ``git send-pack``):
rules and commands are both rewritten to what they mean (:mod:`._meaning`,
docs/allowlist.md#what-a-deny-rule-reaches) and matched in every spelling.
A pure leaf: stdlib and the shell leaves it imports.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from multiplex.shell.detection._scripts import script_lines
from multiplex.shell.parsing._argv import operands, opts
from multiplex.shell.parsing._parsed import ParsedLine
from multiplex.shell.rules._meaning import PYTHON_PROGRAM, may_rename, meanings
from multiplex.shell.rules._rules import Rule, RuleSet, _compile, _is_glob

__all__ = ["OPTIONS_WITH_VALUE", "deny_match", "matches_skipping_options"]

_KUBECTL = opts(
    "-n --namespace --context --cluster --user -s --server --kubeconfig -l --selector -o "
    "--output --token --as --as-group --request-timeout --certificate-authority "
    "--client-certificate --client-key --tls-server-name -v --v --cache-dir"
)
_DOCKER = opts("-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey")
OPTIONS_WITH_VALUE: dict[str, frozenset[str]] = {
    "git": opts("-C -c --git-dir --work-tree --namespace --exec-path --super-prefix --config-env"),
    "systemctl": opts(
        "-H --host -M --machine -t --type -p --property -s --signal --state --root -n "
        "--lines -o --output --job-mode --kill-whom --what --timestamp --image"
    ),
    "kubectl": _KUBECTL,
    "oc": _KUBECTL,
    "docker": _DOCKER,
    "nerdctl": _DOCKER,
    "podman": opts(
        "--url -c --connection --root --runroot --storage-driver --log-level --runtime --tmpdir"
    ),
    "npm": opts("--prefix -w --workspace --registry --cache --userconfig --loglevel"),
    "pnpm": opts("-C --dir --filter -F"),
    "yarn": opts("--cwd"),
    "helm": opts("-n --namespace --kube-context --kubeconfig --registry-config"),
    "aws": opts("--profile --region --output --endpoint-url --query --ca-bundle"),
    "gcloud": opts("--project --account --configuration --format --verbosity"),
    "az": opts("--subscription -o --output --query"),
    "cargo": opts("--manifest-path -Z --config --color -C"),
    "make": opts("-C --directory -f --file --makefile -j --jobs -I --include-dir"),
    "terraform": frozenset(),
    "journalctl": opts("-u --unit -n --lines -o --output -p --priority"),
}


def _basename(word: str) -> str:
    return word.rpartition("/")[2].casefold()


def matches_skipping_options(rule: Rule, argv: Sequence[str]) -> bool:
    """``rule`` matches ``argv`` when option words before each literal rule word are skipped."""
    takes = OPTIONS_WITH_VALUE.get(_basename(argv[0]), frozenset())
    tokens = rule.tokens[1:-1] if rule.prefix else rule.tokens[1:]
    i = 1
    for token in tokens:
        word_matches = _compile(token)
        if not token.startswith("-"):
            while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
                if word_matches(argv[i]):
                    break
                if argv[i] == "--":
                    i += 1
                    break
                i += 2 if argv[i] in takes else 1
        if i >= len(argv) or not word_matches(argv[i]):
            return False
        i += 1
    return i == len(argv) or (rule.prefix and i <= len(argv))


@functools.lru_cache(maxsize=256)
def _by_program(rules: RuleSet) -> tuple[dict[str, tuple[Rule, ...]], tuple[Rule, ...]]:
    named: dict[str, list[Rule]] = {}
    globbed: list[Rule] = []
    for rule in rules:
        if _is_glob(rule.program) or "/" in rule.program:
            globbed.append(rule)
        else:
            named.setdefault(rule.program.casefold(), []).append(rule)
    return {k: tuple(v) for k, v in named.items()}, tuple(globbed)


def _has_option(argv: Sequence[str]) -> bool:
    # A loop, not any(): any() closing its generator at the first option costs more.
    for word in argv[1:]:  # noqa: SIM110
        if word.startswith("-"):
            return True
    return False


def _match_one(rules: RuleSet, argv: Sequence[str]) -> Rule | None:
    rule = rules.match(argv)
    if rule is not None or not _has_option(argv):
        return rule
    named, globbed = _by_program(rules)
    for candidate in named.get(_basename(argv[0]), ()):
        if matches_skipping_options(candidate, argv):
            return candidate
    for candidate in globbed:
        program_ok = candidate.matches((argv[0], *candidate.tokens[1:]), ignore_case_program=True)
        if program_ok and matches_skipping_options(candidate, argv):
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class _Meant:
    """Deny rules with their meanings added, each meaning naming the rule it came from.

    ``words``: by each rule's program (casefolded, a path rule's whole path), the words
    one of which every command its rules match holds (each rule's first literal argument:
    it matches only an equal word), None for a program one of whose rules has none; the
    whole table None when a rule's program is a glob (then any program may match).
    """

    rules: RuleSet
    origin: dict[str, str]
    words: dict[str, frozenset[str] | None] | None


def _words(rules: RuleSet) -> dict[str, frozenset[str] | None] | None:
    if any(_is_glob(rule.program) for rule in rules):
        return None
    found: dict[str, set[str] | None] = {}
    for rule in rules:
        program = rule.program.casefold()
        rest = rule.tokens[1:-1] if rule.prefix else rule.tokens[1:]
        literal = next((token for token in rest if not _is_glob(token)), None)
        known = found.setdefault(program, set())
        if literal is None or known is None:
            found[program] = None
        else:
            known.add(literal)
    return {k: None if v is None else frozenset(v) for k, v in found.items()}


def _may_match(argv: Sequence[str], words: dict[str, frozenset[str] | None]) -> bool:
    """Some rule may match ``argv`` or one of its meanings: its program is a rule's, or
    meanings() may name another one (:func:`._meaning.may_rename`)."""
    word = argv[0]
    if word.rpartition("/")[2].casefold() in words:
        return True
    return ("/" in word and word.casefold() in words) or may_rename(argv)


_NONE: frozenset[str] = frozenset()


def _may_hold(form: Sequence[str], words: dict[str, frozenset[str] | None]) -> bool:
    """Some rule may match ``form`` itself: one names its program, and ``form`` holds that
    rule's first literal word (every literal word of a rule must equal one of the command's)."""
    word = form[0]
    need = words.get(word.rpartition("/")[2].casefold(), _NONE)
    if need is None or not need.isdisjoint(form):
        return True
    if "/" not in word:
        return False
    need = words.get(word.casefold(), _NONE)
    return need is None or not need.isdisjoint(form)


def _takes(program: str) -> frozenset[str]:
    return OPTIONS_WITH_VALUE.get(_basename(program), frozenset())


@functools.lru_cache(maxsize=256)
def _meant(rules: RuleSet, cwd: str | None) -> _Meant:
    extra: list[Rule] = []
    origin = {rule.text: rule.text for rule in rules}
    for rule in rules:
        words = rule.tokens[:-1] if rule.prefix else rule.tokens
        if not words or _is_glob(rule.program):
            continue
        for form in meanings(words, cwd=cwd, takes=_takes(rule.program), rule=True):
            tokens = (*form, "*") if rule.prefix else form
            text = shlex.join(tokens)
            if text not in origin:
                origin[text] = rule.text
                extra.append(Rule(text, tokens))
    meant = RuleSet((*rules, *extra), ignore_case_program=True) if extra else rules
    return _Meant(meant, origin, _words(meant))


# The last rules and folder asked and their meanings: a profile's decisions ask the same
# set (the same object) at the same folder, which the lru_cache would hash each time.
_last_meant: tuple[RuleSet | None, str | None, _Meant] = (None, None, _Meant(RuleSet(()), {}, None))


def _fed_scripts(parsed: ParsedLine) -> list[tuple[str, ...]]:
    """``python - < deploy.py`` (or no ``-``), ``cat deploy.py | python``: as ``python
    deploy.py``: the file it is fed is the script it runs."""
    found: list[tuple[str, ...]] = []
    commands = parsed.commands
    for k, cmd in enumerate(commands + parsed.variant_commands):
        # (Every name PYTHON_PROGRAM matches holds "py": most commands need no regex.)
        if not cmd.argv or "py" not in cmd.program or not PYTHON_PROGRAM.fullmatch(cmd.program):
            continue
        fed = [r.target for r in cmd.redirects if r.op in ("<", "0<")][-1:]
        if not fed and 0 < k < len(commands) and cmd.upstream[-1:] == ("cat",):
            before = commands[k - 1]  # the stage before it in the pipeline
            fed = operands(before.argv[1:]) if before.program == "cat" else []
        args = cmd.argv[1:]
        # Only options before "-" (or nothing): -c and -m run something else, a script word
        # is the script.
        options = args[: args.index("-")] if "-" in args else args
        if fed and all(a.startswith("-") and a[1:2] not in ("c", "m") for a in options):
            rest = args[len(options) + 1 :] if "-" in args else ()
            found += [("python", script, *rest) for script in fed if script != "-"]
    return found


def deny_match(
    rules: RuleSet, parsed: ParsedLine, *, cwd: str | None = None
) -> tuple[str, tuple[str, ...]] | None:
    """The first deny rule some command of the line matches, with that command's argv.

    A command matches in its own spelling and in each of its meanings; a rule in
    its own and in each of its (docs/allowlist.md#what-a-deny-rule-reaches).
    ``cwd`` is where the line runs: a script named by a path into it is the same
    script as one named from it.
    """
    if not len(rules):
        return None
    global _last_meant
    last = _last_meant  # one read: another thread may replace it meanwhile
    if last[0] is not rules or last[1] != cwd:
        last = _last_meant = (rules, cwd, _meant(rules, cwd))
    meant = last[2]
    argvs: Sequence[tuple[str, ...]] = parsed.match_argvs()
    if parsed.script_payloads:
        argvs = [*argvs, *(a for inner in script_lines(parsed, 0) for a in inner.match_argvs())]
    fed = _fed_scripts(parsed)
    if fed:
        argvs = [*argvs, *fed]
    words = meant.words
    for argv in argvs:
        # Most commands name a program no rule names: no meaning of theirs is looked for.
        if words is not None and not _may_match(argv, words):
            continue
        for form in (argv, *meanings(argv, cwd=cwd, takes=_takes(argv[0]))):
            # Most spellings hold no word a rule of their program needs: none is tried.
            if words is not None and not _may_hold(form, words):
                continue
            rule = _match_one(meant.rules, form)
            if rule is not None:
                return meant.origin.get(rule.text, rule.text), argv
    return None
