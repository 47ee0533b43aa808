"""Steps 1-7 of docs/approvals.md#order-of-checks: the checks that never ask anyone. Pure: they write nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from multiplex.approval._allow_guard import OUTSIDE, smuggled
from multiplex.approval._decision import Danger, DecidedBy, TraceStep
from multiplex.profiles import ApprovalSettings
from multiplex.shell import (
    WRITES_BY_OPTION,
    Finding,
    ParsedLine,
    Place,
    Rule,
    RuleSet,
    SimpleCommand,
    deny_match,
    find_dangerous,
    find_dangers,
    find_hardline,
    find_named,
    find_other_home,
    find_protected_write,
    inert,
    literal_words,
)

__all__ = [
    "CONTAINER_BACKENDS",
    "CheckInput",
    "Conclusion",
    "dangers_of",
    "deny_set",
    "nothing_held",
    "run_static_checks",
]


@dataclass(frozen=True, slots=True)
class Conclusion:
    """Where the checks stopped: ``approved``, ``blocked`` or ``ask`` (go on asking)."""

    outcome: str
    cause: str
    decided_by: DecidedBy | None
    rule: str | None
    step: str


_NOWHERE = Place()


def nothing_held(argv: Sequence[str]) -> str | None:
    """``CheckInput.held`` where no grant is bound to files: nothing is ever held."""
    return None


@dataclass(slots=True)  # made once per decision and only read: not frozen, which costs its init
class CheckInput:
    """Everything steps 1-7 look at, resolved at the profile's current epoch."""

    parsed: ParsedLine
    approvals: ApprovalSettings
    backend: str
    host_access: bool
    allowlist: RuleSet
    session_grants: RuleSet
    session_yolo: bool
    place: Place = _NOWHERE
    search_path: str = ""
    # Why a command a bound grant names must ask (docs/allowlist.md#grants), or None.
    held: Callable[[Sequence[str]], str | None] = nothing_held


# docs/approvals.md#order-of-checks step 5: only these backends run commands in a sealed
# container; ssh reaches a real host and local is the host itself.
CONTAINER_BACKENDS = frozenset({"docker", "singularity", "modal", "daytona"})


@lru_cache(maxsize=1024)
def _deny_set(rules: tuple[str, ...]) -> RuleSet:
    return RuleSet(rules, ignore_case_program=True)


# The last tuple asked and its set: a view hands out the same tuple on every decision,
# which the lru_cache would hash anew (each of its texts) every time.
_last_deny: tuple[tuple[str, ...], RuleSet] = ((), RuleSet((), ignore_case_program=True))


def deny_set(rules: tuple[str, ...]) -> RuleSet:
    """Deny rules, compiled once per distinct tuple; program names ignore case (docs/allowlist.md#rules)."""
    global _last_deny
    last = _last_deny  # one read: another thread may replace it meanwhile
    if last[0] is not rules:
        last = _last_deny = (rules, _deny_set(rules))
    return last[1]


def _deny_match(
    parsed: ParsedLine, rules: tuple[str, ...], cwd: str | None
) -> tuple[str, Sequence[str]] | None:
    if not rules:
        return None
    return deny_match(deny_set(rules), parsed, cwd=cwd)


def _allow_match(data: CheckInput, quiet: bool = False) -> tuple[str, bool] | None:
    """The rules that vouch for every command, and whether a session grant was one of them.

    The permanent allowlist is asked first, so a command both cover is recorded as
    allowlisted; one only a session grant covers is recorded as a session grant
    (docs/approvals.md#sessions), never as a rule config.yaml does not hold. An inert
    line (``quiet``) smuggles nothing: its programs are bare names with none of the
    options ``smuggled`` looks for but tar's ``f`` (docs/security.md#inert-lines).
    """
    # docs/allowlist.md#rules: EVERY simple command must match, none may write a file.
    parsed = data.parsed
    if parsed.error is not None or not parsed.commands:
        return None
    matched: list[str] = []
    by_grant = False
    for command in parsed.commands:
        why = (
            None
            if (quiet and command.program not in WRITES_BY_OPTION) or command.writes_file
            else smuggled(command, data.search_path, data.place.cwd)
        )
        if command.writes_file or (why is not None and why != OUTSIDE):
            return None
        # An assignment prefix (PATH=. ls) is matched too: only a rule naming it covers it.
        argv = command.assignments + command.argv if command.assignments else command.argv
        rule = data.allowlist.match(argv)
        if rule is None:
            rule = data.session_grants.match(argv)
            if rule is None:
                return None
            by_grant = True
        if why is not None and not _names_the_path(rule.text, command, _moves(parsed)):
            return None
        if rule.as_written and not _as_written(rule, command):
            return None
        # A grant bound to files of the turn's folder vouches for nothing a cd moved away
        # from it (cd sub && python3 build.py runs sub/build.py, not the file it bound).
        if _bound(data.allowlist, rule) and _moves(parsed):
            return None
        if rule.text not in matched:
            matched.append(rule.text)
    return "; ".join(matched), by_grant


_MOVES = frozenset({"cd", "pushd", "popd"})


def _bound(rules: RuleSet, rule: Rule) -> bool:
    # (A profile's GrantedRules; a plain rule set, or one with no bound grant, binds none.)
    return bool(getattr(rules, "binds", False)) and bool(rules.bound(rule))  # type: ignore[attr-defined]


def _as_written(rule: Rule, command: SimpleCommand) -> bool:
    """Whether each of the rule's literal words that bash would expand if bare (``[*].bak``
    saved from ``rm '*.bak'``, ``$HOME`` from ``echo '$HOME'``) is written literally in the
    command too: ``rm *.bak`` is not what was approved (docs/allowlist.md#rules)."""
    written = literal_words(command.text)
    return all(written.get(word, False) for word in rule.as_written)


def _moves(parsed: ParsedLine) -> bool:
    """Some command of the line changes its folder."""
    return any(c.program in _MOVES for c in parsed.commands)


def _names_the_path(rule: str, command: SimpleCommand, moved: bool) -> bool:
    """Whether ``rule`` names the command's path-qualified program itself (``./gradlew *``
    for ``./gradlew build``), not only its bare name (docs/allowlist.md): an absolute
    path, or a relative one on a line that stays in the turn's working folder."""
    words = rule.split()
    at = len(command.assignments)
    program = command.argv[0]
    return len(words) > at and words[at] == program and (program.startswith("/") or not moved)


def _held(data: CheckInput) -> str | None:
    if data.parsed.error is not None or data.held is nothing_held:
        return None
    for command in data.parsed.commands:
        why = data.held(command.assignments + command.argv)
        if why is not None:
            return why
    return None


def dangers_of(
    data: CheckInput, finding: Finding | None, end: Conclusion | None
) -> tuple[Danger, ...]:
    """Every danger of a line the checks blocked or left to ask (``end`` None) about.

    docs/approvals.md#what-a-prompt-shows: an approval before detection (allowlist,
    yolo, container) looked for none and costs no more; a line that went through
    detection and showed nothing has none (that search is complete); another
    profile's home is never named (docs/security.md#another-profiles-home).
    Otherwise one more pass collects them all.
    """
    if end is not None and end.outcome == "approved":
        return ()
    if finding is None and (end is None or end.step == "detection"):
        return ()
    if finding is not None and finding.pattern.name == "other-profile-home":
        return ()
    found = find_dangers(data.parsed, data.place)
    if finding is not None and finding.pattern.name == "protected-file":
        found = (finding, *found)
    seen: dict[tuple[str, str], Danger] = {}
    for f in found:
        seen.setdefault((f.pattern.name, f.where), Danger(f.pattern.name, f.where))
    return tuple(seen.values())


# The steps most decisions pass the same way: made once (values, compared by value).
_HARDLINE_PASS = TraceStep("hardline", "pass")
_YOLO_PASS = TraceStep("yolo", "pass")
_NOT_SEALED = TraceStep("container", "pass", "not applied")
_HOST_MOUNTS = TraceStep("container", "pass", "host mounts given")
_NOT_EVERY_COMMAND = TraceStep("allowlist", "pass", "not every command matches")
_NOTHING_FOUND_STEP = TraceStep("detection", "approved", "nothing dangerous detected")
_NOTHING_FOUND = Conclusion(
    "approved", "nothing dangerous detected", DecidedBy.POLICY, None, "detection"
)


# The parse and deny steps most decisions pass, by their count ("2 simple commands",
# "200 rules"): made once each (values; bounded tables, not caches of lines).
_PARSED: dict[int, TraceStep] = {}
_DENY_PASSED: dict[int, TraceStep] = {}


def _counted(
    made: dict[int, TraceStep], count: int, step: str, outcome: str, noun: str
) -> TraceStep:
    found = made.get(count)
    if found is None:
        found = TraceStep(step, outcome, f"{count} {noun}")
        if len(made) < 4096:
            made[count] = found
    return found


def _describe(finding: Finding) -> str:
    return f"{finding.pattern.name}: {finding.pattern.description}"


def run_static_checks(
    data: CheckInput,
) -> tuple[list[TraceStep], Conclusion | None, Finding | None]:
    """Run steps 1-7 in order; stop at the first that decides.

    Returns the trace, the conclusion (None = go on to steps 8-10) and the
    named pattern found (the hardline one that blocked, or the dangerous one that
    made the line need a human), if any.
    """
    parsed, approvals = data.parsed, data.approvals
    trace: list[TraceStep] = []

    def stop(
        step: str, outcome: str, cause: str, by: DecidedBy, rule: str | None = None
    ) -> Conclusion:
        trace.append(TraceStep(step, outcome, cause if rule is None else f"{cause} ({rule})"))
        return Conclusion(outcome, cause, by, rule, step)

    # 1. parse limits
    if parsed.over_limit is not None:
        return (
            trace,
            stop("parse", "blocked", f"over limits: {parsed.over_limit}", DecidedBy.POLICY),
            None,
        )
    segments = len(parsed.commands)
    if parsed.error is None:
        trace.append(_counted(_PARSED, segments, "parse", "ok", "simple commands"))
    else:
        trace.append(TraceStep("parse", "error", parsed.error))
    # docs/security.md#inert-lines: a line no check of steps 2 and 5-7 can find anything in.
    quiet = inert(parsed, data.place, approvals.protected_files)
    # 2. hardline, and another profile's home (never named: docs/security.md#another-profiles-home)
    other = None if quiet else find_other_home(parsed, data.place)
    if other is not None:
        cause = "another profile's home"
        return trace, stop("hardline", "blocked", cause, DecidedBy.POLICY), other
    hard = None if quiet else find_hardline(parsed, place=data.place)
    if hard is not None:
        return (
            trace,
            stop("hardline", "blocked", f"hardline: {_describe(hard)}", DecidedBy.POLICY),
            hard,
        )
    trace.append(_HARDLINE_PASS)
    # 3. deny rules: before every bypass, container skip and allowlist
    denied = _deny_match(parsed, approvals.deny, data.place.cwd)
    if denied is not None:
        return trace, stop("deny", "blocked", "deny rule", DecidedBy.RULE, denied[0]), None
    trace.append(_counted(_DENY_PASSED, len(approvals.deny), "deny", "pass", "rules"))
    # 4. yolo or mode off
    if approvals.yolo or data.session_yolo or approvals.mode == "off":
        why = (
            "approvals.mode: off"
            if approvals.mode == "off"
            else ("profile yolo" if approvals.yolo else "session yolo")
        )
        return trace, stop("yolo", "approved", why, DecidedBy.POLICY), None
    trace.append(_YOLO_PASS)
    # 5. container without host access: heuristics skipped. Not in strict mode
    # (it asks for everything not allowlisted) and not for an unparseable line.
    sealed = data.backend in CONTAINER_BACKENDS and not data.host_access
    if sealed and approvals.mode != "strict" and parsed.error is None:
        return (
            trace,
            stop(
                "container",
                "approved",
                f"{data.backend} backend without host access",
                DecidedBy.POLICY,
            ),
            None,
        )
    trace.append(_NOT_SEALED if data.backend not in CONTAINER_BACKENDS else _HOST_MOUNTS)
    protected = (
        None if quiet else find_protected_write(parsed, approvals.protected_files, data.place)
    )
    # 6. session grants and the permanent allowlist; a named pattern is never vouched for
    named = None if quiet or protected is not None else find_named(parsed, data.place)
    allowed = None if protected is not None or named is not None else _allow_match(data, quiet)
    if allowed is not None:
        rules, by_grant = allowed
        cause = "session grant" if by_grant else "allowlisted"
        return trace, stop("allowlist", "approved", cause, DecidedBy.RULE, rules), None
    held = _held(data) if protected is None and named is None else None
    if held is not None:  # a bound file changed: a human looks again, whatever detection says
        trace.append(TraceStep("allowlist", "ask", held))
        return trace, None, None
    if protected is not None:
        trace.append(TraceStep("allowlist", "pass", "protected file write"))
    elif named is not None:
        trace.append(TraceStep("allowlist", "pass", f"{named.pattern.name} is never allowlisted"))
    else:
        trace.append(_NOT_EVERY_COMMAND)
    # 7. detection
    finding = None if quiet else protected or find_dangerous(parsed, place=data.place)
    if finding is None and approvals.mode != "strict":
        trace.append(_NOTHING_FOUND_STEP)
        return trace, _NOTHING_FOUND, None
    detail = _describe(finding) if finding else "mode strict: everything not allowlisted asks"
    trace.append(TraceStep("detection", "ask", detail))
    return trace, None, finding
