"""The command-rule language of allowlists and deny lists (docs/allowlist.md#rules).

A rule is a string split like a shell command (``shlex``). Each token is an
``fnmatch`` glob over exactly ONE argv word, so a glob never reaches into the
next word. A lone final ``*`` token matches zero or more remaining words (a
prefix rule); otherwise the rule and the argv have the same number of words.
The first token matches the basename of ``argv[0]`` unless it contains ``/``,
in which case it must match ``argv[0]`` as written.

Quoting only groups words: ``'*.txt'`` is still a glob. A literal ``*``, ``?``
or ``[`` is written ``[*]``, ``[?]``, ``[[]``; :func:`exact_rule` does this for
you when it turns an approved argv into a rule that matches that argv only.

This module is a pure leaf (docs/design.md): it imports the standard library and
``multiplex._errors`` only.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import shlex
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from multiplex._errors import RuleSyntaxError

__all__ = ["MAX_RULE_LENGTH", "Rule", "RuleSet", "exact_rule", "parse_rule"]

MAX_RULE_LENGTH = 4096
"""Longest rule text (after stripping) that :func:`parse_rule` accepts."""

_GLOB_CHARS = frozenset("*?[")
_PREVIEW = 60  # characters of a bad rule quoted in an error message

# A word matcher: truthy when the word matches. Literal tokens use ``str.__eq__``
# (one C call); glob tokens a compiled regex's ``match``.
_WordMatcher = Callable[[str], object]


def _is_glob(token: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(token)


@functools.lru_cache(maxsize=16384)
def _compile(token: str) -> _WordMatcher:
    """One matcher per distinct token, shared by every rule that uses it."""
    if not _is_glob(token):
        return token.__eq__
    # fnmatch.translate anchors the pattern (``\\Z``) and lets ``*`` match any
    # character; the word boundary comes from matching one argv word at a time.
    return re.compile(fnmatch.translate(token)).match


def _basename(program: str) -> str:
    return program.rpartition("/")[2]


def _preview(text: str) -> str:
    shown = repr(text[:_PREVIEW])
    return shown + "…" if len(text) > _PREVIEW else shown


def _invalid(text: str, reason: str) -> RuleSyntaxError:
    return RuleSyntaxError(f"invalid rule {_preview(text)}: {reason}")


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed command rule; equal rules have equal text and tokens.

    Build it with :func:`parse_rule`, which validates the text. ``matches`` is
    pure and thread-safe.
    """

    text: str
    tokens: tuple[str, ...]
    # Derived matchers, compiled once; excluded from eq/hash/repr.
    _program_slash: bool = field(init=False, repr=False, compare=False)
    _program_cs: _WordMatcher = field(init=False, repr=False, compare=False)
    _program_ci: _WordMatcher = field(init=False, repr=False, compare=False)
    _rest: tuple[_WordMatcher, ...] = field(init=False, repr=False, compare=False)
    _prefix: bool = field(init=False, repr=False, compare=False)
    as_written: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Its literal words that bash would expand if written bare (``[*].bak``, ``$HOME``,
    ``~``): each covers only a word written literally (quoted) in a command."""

    def __post_init__(self) -> None:
        if not self.tokens or not self.tokens[0]:
            raise _invalid(self.text, "no program name")
        program = self.tokens[0]
        prefix = len(self.tokens) > 1 and self.tokens[-1] == "*"
        rest = self.tokens[1:-1] if prefix else self.tokens[1:]
        setattr_ = object.__setattr__  # frozen dataclass: set derived fields once
        setattr_(self, "_program_slash", "/" in program)
        setattr_(self, "_program_cs", _compile(program))
        setattr_(self, "_program_ci", _compile(program.casefold()))
        setattr_(self, "_rest", tuple(_compile(token) for token in rest))
        setattr_(self, "_prefix", prefix)
        setattr_(self, "as_written", _as_written(self.tokens[: len(self.tokens) - prefix]))

    @property
    def prefix(self) -> bool:
        """True when the last token is a lone ``*`` (zero or more further words)."""
        return self._prefix

    @property
    def program(self) -> str:
        """The first token: a basename glob, or a path glob if it contains ``/``."""
        return self.tokens[0]

    def matches(self, argv: Sequence[str], *, ignore_case_program: bool = False) -> bool:
        """True if ``argv`` (program first) matches this rule word by word.

        ``ignore_case_program`` (deny rules, docs/allowlist.md#rules) compares the program
        casefolded on both sides; every other word stays case-sensitive. An
        empty argv matches nothing.
        """
        if not argv:
            return False
        program = argv[0] if self._program_slash else _basename(argv[0])
        if ignore_case_program:
            if not self._program_ci(program.casefold()):
                return False
        elif not self._program_cs(program):
            return False
        return self._arguments_match(argv)

    def _arguments_match(self, argv: Sequence[str]) -> bool:
        """Words after the program (the caller has already matched ``argv[0]``)."""
        rest = self._rest
        count = len(rest)
        if len(argv) - 1 != count and not (self._prefix and len(argv) - 1 > count):
            return False
        # A plain loop, not all(<generator>): this is the hot path of RuleSet.match.
        for index in range(count):  # noqa: SIM110
            if not rest[index](argv[index + 1]):
                return False
        return True

    def __str__(self) -> str:
        return self.text


def parse_rule(text: str) -> Rule:
    """Parse one rule, or raise :class:`RuleSyntaxError` with a one-line reason.

    Refused: a non-string, an empty or blank rule, more than
    :data:`MAX_RULE_LENGTH` characters, control characters (NUL, newline, tab,
    DEL, C1), unbalanced quotes or a dangling backslash, an empty program name,
    and a rule that would match every command (``*``, ``* *``).
    """
    if not isinstance(text, str):
        raise RuleSyntaxError(f"invalid rule: expected a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise _invalid(text, "empty rule")
    if len(stripped) > MAX_RULE_LENGTH:
        raise _invalid(stripped, f"longer than {MAX_RULE_LENGTH} characters")
    for position, char in enumerate(stripped):
        # Cc covers NUL, tab, newline, CR, ESC, DEL and C1: a newline inside one
        # rule would silently merge two commands into one rule.
        if unicodedata.category(char) == "Cc":
            raise _invalid(stripped, f"control character {char!r} at position {position}")
    try:
        tokens = tuple(shlex.split(stripped, posix=True))
    except ValueError as exc:
        reason = "unbalanced quotes" if "quotation" in str(exc) else "dangling backslash"
        raise _invalid(stripped, reason) from None
    if not tokens or not tokens[0]:
        raise _invalid(stripped, "no program name")
    if _matches_everything(tokens):
        raise _invalid(stripped, "matches every command; name the program")
    return Rule(stripped, tokens)


def _matches_everything(tokens: tuple[str, ...]) -> bool:
    # A program token of only stars matches any basename; with nothing after it
    # or only the prefix "*", the rule would approve (or deny) every command.
    return set(tokens[0]) == {"*"} and (len(tokens) == 1 or tokens[1:] == ("*",))


_ESCAPED = re.compile(r"\[(.)\]")
# A character that may make bash expand a word written bare.
_MAY_EXPAND = re.compile(r"[*?\[{$`~]")


def _as_written(tokens: tuple[str, ...]) -> tuple[str, ...]:
    found = []
    for token in tokens:
        if _is_glob(_ESCAPED.sub("", token)):
            continue  # a pattern, not one word
        literal = _ESCAPED.sub(r"\1", token)
        if _MAY_EXPAND.search(literal):
            found.append(literal)
    return tuple(found)


def _escape_glob(word: str) -> str:
    return "".join(f"[{char}]" if char in _GLOB_CHARS else char for char in word)


def exact_rule(argv: Sequence[str], *, prefix: bool = False) -> Rule:
    """A rule that matches exactly ``argv`` (glob characters escaped, words quoted).

    With ``prefix=True`` a final ``*`` is appended, so it also matches any
    further words. This is how an "always" answer saves a command (docs/allowlist.md#rules,
    docs/approvals.md#outcomes-and-what-the-agent-sees): a word such as ``*`` in the approved command stays literal.
    Raises :class:`RuleSyntaxError` for an empty argv or a word the rule
    language cannot hold (control characters).
    """
    if not argv:
        raise RuleSyntaxError("invalid rule '': empty command")
    words = [shlex.quote(_escape_glob(word)) for word in argv]
    if prefix:
        words.append("*")
    return parse_rule(" ".join(words))


_Bucket = tuple[tuple[int, Rule], ...]


def _by_first_word(bucket: list[tuple[int, Rule]]) -> tuple[dict[str, _Bucket], _Bucket]:
    """A program's rules split by their first argument word when it is literal (it must then
    equal ``argv[1]``), the others (no argument, a glob) kept apart; index order kept in each."""
    worded: dict[str, list[tuple[int, Rule]]] = {}
    other: list[tuple[int, Rule]] = []
    for index, rule in bucket:
        rest = rule._rest
        word = rule.tokens[1] if rest else None
        if word is not None and not _is_glob(word):
            worded.setdefault(word, []).append((index, rule))
        else:
            other.append((index, rule))
    return {word: tuple(rules) for word, rules in worded.items()}, tuple(other)


class RuleSet:
    """Immutable set of rules indexed by program name, so 10,000 rules cost little more than 10.

    ``match`` returns the first rule (in insertion order) that matches, exactly
    as scanning the rules one by one with :meth:`Rule.matches` would. Rules
    given as strings are parsed with :func:`parse_rule` (so construction may
    raise :class:`RuleSyntaxError`); duplicate texts keep their first position.
    Equality and hash follow the rule texts in order and ``ignore_case_program``.
    """

    __slots__ = (
        "_by_name",
        "_by_path",
        "_fallback",
        "_hash",
        "_ignore_case",
        "_rules",
        "_text_set",
        "_texts",
    )

    def __init__(
        self, rules: Iterable[Rule | str] = (), *, ignore_case_program: bool = False
    ) -> None:
        ignore_case = bool(ignore_case_program)
        ordered: dict[str, Rule] = {}
        for item in rules:
            rule = item if isinstance(item, Rule) else parse_rule(item)
            ordered.setdefault(rule.text, rule)
        by_name: dict[str, list[tuple[int, Rule]]] = {}
        by_path: dict[str, list[tuple[int, Rule]]] = {}
        fallback: list[tuple[int, Rule]] = []
        for index, rule in enumerate(ordered.values()):
            program = rule.program
            if _is_glob(program):
                fallback.append((index, rule))
                continue
            key = program.casefold() if ignore_case else program
            # A literal program token is compared with ==, so a dict lookup on
            # the same key is the same test (basename, or whole path with "/").
            table = by_path if "/" in program else by_name
            table.setdefault(key, []).append((index, rule))
        self._rules: tuple[Rule, ...] = tuple(ordered.values())
        self._texts: tuple[str, ...] = tuple(ordered)
        self._text_set = frozenset(ordered)
        self._ignore_case = ignore_case
        self._by_name = {key: _by_first_word(bucket) for key, bucket in by_name.items()}
        self._by_path = {key: _by_first_word(bucket) for key, bucket in by_path.items()}
        self._fallback = tuple(fallback)
        self._hash: int | None = None

    @property
    def ignore_case_program(self) -> bool:
        """Whether program names are compared casefolded (deny rules)."""
        return self._ignore_case

    def match(self, argv: Sequence[str]) -> Rule | None:
        """The first rule in insertion order that matches ``argv``, or None."""
        if not argv or not self._rules:  # (a session's grants: most often none)
            return None
        program = argv[0]
        if self._ignore_case:
            program = program.casefold()
        best_index = len(self._rules)
        best: Rule | None = None
        first = argv[1] if len(argv) > 1 else None
        # A bare name is no path rule's key (each holds a "/"): one lookup.
        slashed = "/" in program
        for table, key in (
            ((self._by_name, _basename(program)), (self._by_path, program))
            if slashed
            else ((self._by_name, program),)
        ):
            bucket = table.get(key)
            if bucket is None:
                continue
            worded, other = bucket
            for candidates in (worded.get(first, ()) if first is not None else (), other):
                for index, rule in candidates:
                    if index >= best_index:
                        break
                    if rule._arguments_match(argv):
                        best_index, best = index, rule
                        break
        for index, rule in self._fallback:
            if index >= best_index:
                break
            if rule.matches(argv, ignore_case_program=self._ignore_case):
                return rule
        return best

    def matches(self, argv: Sequence[str]) -> bool:
        """True if some rule matches ``argv``."""
        return self.match(argv) is not None

    def texts(self) -> tuple[str, ...]:
        """Rule texts in insertion order, duplicates removed."""
        return self._texts

    def __len__(self) -> int:
        return len(self._rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Rule):
            item = item.text
        return isinstance(item, str) and item.strip() in self._text_set

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RuleSet):
            return NotImplemented
        if self is other:
            return True
        return self._texts == other._texts and self._ignore_case == other._ignore_case

    def __hash__(self) -> int:
        # Deny rules are cache keys on every decision: their texts are hashed once.
        found = self._hash
        if found is None:
            found = self._hash = hash((self._texts, self._ignore_case))
        return found

    def __repr__(self) -> str:
        flag = ", ignore_case_program=True" if self._ignore_case else ""
        return f"RuleSet({list(self._texts)!r}{flag})"
