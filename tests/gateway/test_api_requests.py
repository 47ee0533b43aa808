"""What the gateway refuses of a request before any gate sees it, over real HTTP (docs/gateway.md#request-bodies).

The fuzzing's findings (issue 28 item 8): a command with a control character,
a boolean where the schema says string or integer, a body that is not JSON or
repeats a key, a route that matches nothing, and the ``Allow`` of a 405.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from starlette.routing import compile_path

from tests.gateway.conftest import Api, Gateway


def _records(gateway: Gateway, profile: str = "alpha") -> list[dict[str, Any]]:
    log = gateway.homes[profile] / "logs" / "decisions.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _raw(
    api: Api, path: str, body: bytes, content_type: str = "application/json"
) -> httpx.Response:
    return api.post(path, content=body, headers={"Content-Type": content_type})


@pytest.mark.parametrize(
    "char", ["\u0000", "\u0001", "\u0008", "\r", "\u000b", "\u001b", "\u007f", "\u009b"]
)
def test_a_command_with_a_control_character_is_refused_before_the_gate(
    gateway: Gateway, char: str
) -> None:
    admin = gateway.admin
    command = f"echo ok a{char}b"  # allowlisted ("echo ok *") but for the character
    before = _records(gateway)
    for body in (
        {"profile": "alpha", "commands": ["true", command], "wait": 10},
        {"profile": "alpha", "commands": [command]},
    ):
        r = admin.post("/v1/runs", json=body)
        assert r.status_code == 422, r.text
        (error,) = r.json()["detail"]
        assert error["loc"][:2] == ["body", "commands"]
        assert f"control character U+{ord(char):04X}" in error["msg"], error
        assert char not in r.text  # never echoed
    test = admin.post("/v1/approvals/test", json={"profile": "alpha", "command": command})
    assert test.status_code == 422 and "control character" in test.text
    # Nothing reached the gate: no run, no record (above all none saying approved).
    assert admin.get("/v1/runs").json() == []
    assert _records(gateway) == before


def test_tab_and_newline_are_commands_characters_still(gateway: Gateway) -> None:
    admin = gateway.admin
    r = admin.post(
        "/v1/runs",
        json={"profile": "alpha", "commands": ["printf 'a\\tb'", "echo ok\tx"], "wait": 15},
    )
    assert r.status_code == 200, r.text
    done = r.json()
    assert done["status"] == "completed"
    assert [x["exit_code"] for x in done["results"]] == [0, 0]
    multi = admin.post("/v1/approvals/test", json={"profile": "alpha", "command": "true\ntrue"})
    assert multi.status_code == 200 and multi.json()["outcome"] == "approved"


@pytest.mark.parametrize(
    "body",
    [
        {"commands": ["true"], "route": {"platform": "telegram", "chat_id": True}},
        {"commands": ["true"], "route": {"platform": "telegram", "user_id": False}},
        {"commands": ["true"], "route": {"platform": True}},
        {"profile": "alpha", "commands": ["true"], "wait": True},
        {"profile": "alpha", "commands": ["true"], "session_id": True},
        {"profile": "alpha", "commands": ["true"], "session_id": 7},
        {"profile": True, "commands": ["true"]},
        {"profile": "alpha", "commands": [True]},
        {"profile": "alpha", "code": ["1"], "reset": 1},
    ],
)
def test_a_boolean_or_number_where_the_schema_says_string_or_integer_is_422(
    gateway: Gateway, body: dict[str, Any]
) -> None:
    r = gateway.admin.post("/v1/runs", json=body)
    assert r.status_code == 422, r.text
    assert gateway.admin.get("/v1/runs").json() == []


def test_numbers_still_count_where_the_schema_says_number_or_integer(gateway: Gateway) -> None:
    admin = gateway.admin
    routed = admin.post(
        "/v1/runs",
        json={"commands": ["true"], "route": {"platform": "telegram", "chat_id": 42}, "wait": 15},
    )
    assert routed.status_code == 200 and routed.json()["profile"] == "beta", routed.text
    plain = admin.post("/v1/runs", json={"profile": "alpha", "commands": ["true"], "wait": 15.5})
    assert plain.status_code == 200 and plain.json()["status"] == "completed"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"{nope", "not JSON"),
        (b'{"profile": "alpha", "commands": ["true"]', "not JSON"),
        (b'{"commands": ["\xff"]}', "not UTF-8"),
        (b'{"profile": "alpha", "commands": ["true"], "wait": NaN}', "NaN"),
        (b'{"profile": "alpha", "commands": ["true"], "wait": Infinity}', "Infinity"),
        (b"[1, 2", "not JSON"),
    ],
)
def test_a_body_that_is_not_json_is_400_on_every_route(
    gateway: Gateway, body: bytes, says: str
) -> None:
    admin = gateway.admin
    for path in ("/v1/runs", "/v1/approvals/test", "/v1/runs/run-x/approval"):
        r = _raw(admin, path, body)
        assert r.status_code == 400, (path, r.text)
        detail = r.json()["detail"]
        assert isinstance(detail, str) and says in detail and "\n" not in detail
    assert admin.get("/v1/runs").json() == []


def test_a_repeated_key_is_400_naming_the_key_wherever_it_is(gateway: Gateway) -> None:
    admin = gateway.admin
    before = _records(gateway)
    # The first "commands" would be refused, the last allowed: neither is guessed.
    top = b'{"profile": "alpha", "commands": ["rm -rf /tmp/x"], "commands": ["true"], "wait": 5}'
    r = _raw(admin, "/v1/runs", top)
    assert r.status_code == 400
    assert r.json()["detail"] == "request body: key 'commands' is given twice in one object"
    nested = b'{"commands": ["true"], "route": {"platform": "telegram", "platform": "irc"}}'
    r = _raw(admin, "/v1/runs", nested)
    assert r.status_code == 400 and "'platform'" in r.json()["detail"]
    answer = b'{"approval_id": "ap-1", "choice": "deny", "choice": "always"}'
    r = _raw(admin, "/v1/runs/run-x/approval", answer)
    assert r.status_code == 400 and "'choice'" in r.json()["detail"]
    # Without a token too: the body is refused before anything reads it.
    r = _raw(gateway.anonymous, "/v1/runs", top)
    assert r.status_code == 400
    assert admin.get("/v1/runs").json() == []
    assert _records(gateway) == before
    # The same key in two objects is no repetition.
    ok = b'{"profile": "alpha", "commands": ["true"], "route": null, "wait": 5}'
    assert _raw(admin, "/v1/runs", ok).status_code == 200


def test_the_schema_documents_the_400_and_the_422_of_every_operation_with_a_body(
    gateway: Gateway,
) -> None:
    schema = gateway.admin.get("/openapi.json").json()
    with_body = [
        (path, method, op)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if "requestBody" in op
    ]
    assert {(p, m) for p, m, _ in with_body} >= {
        ("/v1/runs", "post"),
        ("/v1/approvals/test", "post"),
        ("/v1/runs/{run_id}/approval", "post"),
    }
    for path, method, op in with_body:
        responses = op["responses"]
        assert "not JSON" in responses["400"]["description"], (path, method)
        assert "detail" in responses["400"]["content"]["application/json"]["schema"]["properties"]
        assert "control character" in responses["422"]["description"], (path, method)
    command = schema["components"]["schemas"]["TestIn"]["properties"]["command"]
    assert command["pattern"] == "^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]*$"


def test_a_405_names_every_method_of_the_path(gateway: Gateway) -> None:
    anonymous = gateway.anonymous  # the method is refused before the token is read
    r = anonymous.request("OPTIONS", "/v1/runs")
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, POST"
    assert anonymous.request("DELETE", "/v1/runs").headers["allow"] == "GET, POST"
    # Every path of the schema: the Allow of a method it does not serve is exactly its methods.
    schema = gateway.admin.get("/openapi.json").json()
    for template, ops in schema["paths"].items():
        path = template
        for name in compile_path(template)[2]:
            path = path.replace("{" + name + "}", "x")
        methods = sorted(m.upper() for m in ops)
        r = anonymous.request("PATCH" if "PATCH" not in methods else "PUT", path)
        assert r.status_code == 405, (path, r.status_code)
        assert r.headers["allow"] == ", ".join(methods), (path, r.headers["allow"])
    several = [t for t, ops in schema["paths"].items() if len(ops) > 1]
    assert "/v1/runs" in several
    assert anonymous.request("OPTIONS", "/static/dashboard.js").headers["allow"] == "GET"


def test_a_route_that_matches_nothing_is_404_not_the_default_profile(gateway: Gateway) -> None:
    admin, alpha = gateway.admin, gateway.profile["alpha"]
    before = _records(gateway)
    body = {"commands": ["true"], "route": {"platform": "irc"}}
    r = admin.post("/v1/runs", json=body)
    assert r.status_code == 404
    assert r.json()["detail"] == "no route matches this origin (default_profile is not used for it)"
    # A profile token (alpha is the default profile here) reads what any route to nothing reads.
    mine = alpha.post("/v1/runs", json=body)
    assert mine.status_code == 404
    assert mine.json()["detail"] == "no served profile matches this route"
    assert admin.post("/v1/runs", json={**body, "route": {}}).status_code == 404
    assert admin.get("/v1/runs").json() == []
    assert _records(gateway) == before
    # Without a route the default profile still takes the run, as documented.
    plain = admin.post("/v1/runs", json={"commands": ["true"], "wait": 15})
    assert plain.status_code == 200 and plain.json()["profile"] == "alpha"


def test_a_turn_without_a_matching_route_still_goes_to_default_profile(gateway: Gateway) -> None:
    # docs/configuration.md: default_profile takes unrouted turns (channels, the library).
    assert gateway.sup.route(platform="irc") == "alpha"
