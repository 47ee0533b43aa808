"""Hand-written ``__init__`` of frozen dataclasses (shell.parsing._parsed.slot_setters): what the generated one does.

Each is written by hand for speed (the gate makes them every decision); these tests fail
the day a field is added, renamed, reordered or given another default without it.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from multiplex.approval._decision import DecidedBy, TraceStep, Verdict, VerdictOutcome
from multiplex.shell.parsing._parsed import ParsedLine, Redirect, SimpleCommand

CLASSES = [SimpleCommand, ParsedLine, Verdict]


@pytest.mark.parametrize("cls", CLASSES)
def test_init_takes_the_init_fields_in_order_with_their_defaults(cls: type) -> None:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    fields = [f for f in dataclasses.fields(cls) if f.init]
    assert [p.name for p in params] == [f.name for f in fields]
    for param, field in zip(params, fields, strict=True):
        expected = (
            inspect.Parameter.empty if field.default is dataclasses.MISSING else field.default
        )
        assert param.default == expected, field.name


def _sample(cls: type) -> dict[str, object]:
    command = SimpleCommand(("ls",), (), "ls")
    values: dict[str, object] = {
        "argv": ("/usr/bin/Cat", "x"),
        "redirects": (Redirect(">", "out"),),
        "text": "cat x > out",
        "wrapped_by": ("sudo",),
        "upstream": ("echo",),
        "assignments": ("A=1",),
        "line": "ls; ls",
        "commands": (command,),
        "variants": ("ls",),
        "script_payloads": ("print(1)",),
        "error": "e",
        "over_limit": "o",
        "variant_commands": (command,),
        "fork_bombs": ("f",),
        "variant_sequences": ((command,),),
        "sequence": (command, command),
        "plain": True,
        "profile": "p",
        "command": "ls",
        "outcome": VerdictOutcome.ASK,
        "cause": "c",
        "decided_by": DecidedBy.RULE,
        "rule": "ls *",
        "segments": (("ls",),),
        "trace": (TraceStep("parse", "ok"),),
        "dangers": (),
    }
    return {f.name: values[f.name] for f in dataclasses.fields(cls) if f.init}


@pytest.mark.parametrize("cls", CLASSES)
def test_every_field_is_set_and_the_value_stays_frozen(cls: type) -> None:
    given = _sample(cls)
    made = cls(**given)
    for field in dataclasses.fields(cls):
        value = getattr(made, field.name)  # an unset slot raises AttributeError
        if field.name in given:
            assert value == given[field.name]
    if hasattr(made, "memo"):  # a fresh memo each
        assert made.memo == {} and made.memo is not cls(**given).memo
    assert made == cls(**given) and hash(made) == hash(cls(**given))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, dataclasses.fields(cls)[0].name, None)
    first = next(iter(given))
    assert dataclasses.replace(made, **{first: given[first]}) == made


def test_program_is_the_lower_cased_basename() -> None:
    assert SimpleCommand(("/usr/bin/Cat", "x"), (), "").program == "cat"
    assert SimpleCommand((), (), "").program == ""
    assert SimpleCommand(("git",), (), "", upstream=("ls",)).upstream == ("ls",)
