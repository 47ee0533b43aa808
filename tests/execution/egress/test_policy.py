"""The egress decision on given addresses (no resolution, no traffic): patterns, deny, vetting."""

from __future__ import annotations

import pytest

import multiplex.execution.egress as egress
from multiplex.execution.egress import (
    EgressPolicy,
    RefusalReason,
    address_kind,
    parse_egress_pattern,
)

PUBLIC = "151.101.0.223"  # a public address, never connected to: decide() only decides


def test_exports_are_sorted_and_resolve() -> None:
    assert egress.__all__ == sorted(egress.__all__)
    for name in egress.__all__:
        assert getattr(egress, name) is not None


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("pypi.org", "pypi.org", None),
        ("PyPI.org.", "pypi.org", None),
        ("*.pythonhosted.org", "*.pythonhosted.org", None),
        ("localhost:5432", "localhost", 5432),
        ("10.0.0.7", "10.0.0.7", None),
        ("10.0.0.7:80", "10.0.0.7", 80),
        ("[::1]:8080", "::1", 8080),
        ("[::FFFF:127.0.0.1]", "::ffff:7f00:1", None),
        ("2001:db8::1", "2001:db8::1", None),
    ],
)
def test_patterns_parse(text: str, host: str, port: int | None) -> None:
    pattern = parse_egress_pattern(text)
    assert (pattern.host, pattern.port) == (host, port)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("host:*", "leave the port out"),
        ("host:0", "not 1-65535"),
        ("host:70000", "not 1-65535"),
        ("host:http", "not 1-65535"),
        ("a*.example.org", "not a host name"),
        ("*.*.example.org", "not a host name"),
        ("*", "not a host name"),
        ("*.10.0.0.1", "a wildcard takes a domain"),
        ("[pypi.org]:443", "only an IPv6 address goes in brackets"),
        ("::1:8080:zz", "not an IPv6 address"),
        ("exa mple.org", "not a host name"),
        ("http://pypi.org", "expected host"),
        ("-bad.org", "not a host name"),
    ],
)
def test_bad_patterns_say_why_in_one_line(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as caught:
        parse_egress_pattern(text)
    assert "\n" not in str(caught.value)


def test_wildcard_matches_subdomains_not_the_apex() -> None:
    policy = EgressPolicy(allow=["*.pythonhosted.org"])
    assert policy.decide("files.pythonhosted.org", 443, [PUBLIC]).allowed
    assert policy.decide("a.b.PYTHONHOSTED.org.", 443, [PUBLIC]).allowed
    apex = policy.decide("pythonhosted.org", 443, [PUBLIC])
    assert apex.reason is RefusalReason.NOT_ALLOWED
    assert apex.message == "refused pythonhosted.org:443 (not in egress.allow)"
    assert not policy.decide("evilpythonhosted.org", 443, [PUBLIC]).allowed


def test_port_in_a_pattern_binds_and_a_missing_port_means_any() -> None:
    policy = EgressPolicy(allow=["pypi.org", "db.example:5432"])
    assert policy.decide("pypi.org", 8443, [PUBLIC]).allowed
    assert policy.decide("db.example", 5432, [PUBLIC]).allowed
    assert policy.decide("db.example", 5433, [PUBLIC]).reason is RefusalReason.NOT_ALLOWED


def test_empty_allow_allows_any_public_destination() -> None:
    verdict = EgressPolicy().decide("example.org", 443, [PUBLIC, "2606:4700::1"])
    assert verdict.allowed and verdict.addresses == (PUBLIC, "2606:4700::1")


def test_deny_beats_allow() -> None:
    policy = EgressPolicy(allow=["*.example.org", "x.example.org"], deny=["x.example.org"])
    verdict = policy.decide("X.example.org", 443, [PUBLIC])
    assert verdict.reason is RefusalReason.DENIED
    assert verdict.message == "refused x.example.org:443 (in egress.deny)"
    assert policy.decide("y.example.org", 443, [PUBLIC]).allowed


def test_a_denied_address_is_refused_whatever_name_leads_there() -> None:
    policy = EgressPolicy(deny=["169.254.169.254", f"{PUBLIC}:443"])
    assert policy.decide("innocent.example", 443, [PUBLIC]).reason is RefusalReason.DENIED
    assert policy.decide("innocent.example", 80, [PUBLIC]).allowed


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%lo", "link-local"),
        ("100.64.0.1", "shared (CGNAT)"),
        ("100.127.255.254", "shared (CGNAT)"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "reserved"),
        ("240.0.0.1", "reserved"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
        ("2002:7f00:1::1", "loopback"),  # 6to4 of 127.0.0.1
        ("not-an-address", "unparsable"),
    ],
)
def test_non_public_addresses_are_named(address: str, kind: str) -> None:
    assert address_kind(address) == kind
    verdict = EgressPolicy().decide("db.internal", 5432, [address])
    assert verdict.reason is RefusalReason.PRIVATE_ADDRESS
    assert verdict.addresses == ()
    assert verdict.message.startswith(f"refused db.internal:5432 (resolves to {kind} address")


@pytest.mark.parametrize("address", [PUBLIC, "8.8.8.8", "2606:4700::1", "64:ff9b::808:808"])
def test_public_addresses_pass(address: str) -> None:
    assert address_kind(address) is None
    assert EgressPolicy().decide("example.org", 443, [address]).allowed


def test_the_spec_message_for_a_private_address() -> None:
    verdict = EgressPolicy().decide("db.internal", 5432, ["10.1.2.3"])
    assert verdict.message == "refused db.internal:5432 (resolves to private address 10.1.2.3)"


def test_only_the_vetted_addresses_are_kept_in_order() -> None:
    verdict = EgressPolicy().decide("mixed.example", 443, ["10.0.0.1", PUBLIC, "::1", "8.8.8.8"])
    assert verdict.allowed and verdict.addresses == (PUBLIC, "8.8.8.8")


def test_a_wildcard_does_not_license_a_private_address() -> None:
    policy = EgressPolicy(allow=["*.corp.example"])
    verdict = policy.decide("db.corp.example", 5432, ["10.1.2.3"])
    assert verdict.reason is RefusalReason.PRIVATE_ADDRESS
    # A name that resolves to loopback (DNS rebinding onto the gateway) is no better.
    assert not policy.decide("rebind.corp.example", 8000, ["127.0.0.1"]).allowed


def test_an_exact_allow_licenses_a_private_address() -> None:
    policy = EgressPolicy(allow=["db.corp.example:5432", "10.9.9.9"])
    assert policy.decide("db.corp.example", 5432, ["10.1.2.3"]).addresses == ("10.1.2.3",)
    assert policy.decide("10.9.9.9", 22, ["10.9.9.9"]).allowed
    # The licence is for the named host, not for every name that reaches the address.
    assert (
        not EgressPolicy(allow=["*.corp.example", "db.corp.example"])
        .decide("other.corp.example", 5432, ["10.1.2.3"])
        .allowed
    )


def test_a_protected_endpoint_needs_its_exact_host_and_port_in_allow() -> None:
    protected = (("127.0.0.1", 6379), ("127.0.0.1", 8000))
    by_host = EgressPolicy(allow=["127.0.0.1", "localhost"], protected=protected)
    verdict = by_host.decide("localhost", 6379, ["127.0.0.1"])
    assert verdict.reason is RefusalReason.PROTECTED
    assert verdict.message == (
        "refused localhost:6379 (resolves to protected endpoint 127.0.0.1:6379)"
    )
    assert by_host.decide("localhost", 5432, ["127.0.0.1"]).allowed  # not a protected port
    exact = EgressPolicy(allow=["localhost:6379"], protected=protected)
    assert exact.decide("localhost", 6379, ["127.0.0.1"]).allowed
    assert not exact.decide("localhost", 8000, ["127.0.0.1"]).allowed


def test_a_protected_public_endpoint_is_refused_too() -> None:
    policy = EgressPolicy(protected=[(PUBLIC, 6379)])
    assert policy.decide("redis.example", 6379, [PUBLIC]).reason is RefusalReason.PROTECTED
    assert policy.decide("redis.example", 6380, [PUBLIC]).allowed


@pytest.mark.parametrize("host", ["", "a b", "x\x00y", "-x.org", "a..b", "x" * 300])
def test_a_malformed_requested_host_is_refused(host: str) -> None:
    verdict = EgressPolicy().decide(host, 80, [PUBLIC])
    assert verdict.reason is RefusalReason.BAD_HOST
    assert "\n" not in verdict.message


def test_no_address_means_refused() -> None:
    assert not EgressPolicy().decide("example.org", 443, []).allowed


def test_numeric_forms_are_compared_canonically() -> None:
    policy = EgressPolicy(deny=["[::1]", "::ffff:a00:1"])
    assert policy.decide("[0:0::1]", 80, ["::1"]).reason is RefusalReason.DENIED
    assert policy.decide("::ffff:10.0.0.1", 80, ["::ffff:10.0.0.1"]).reason is RefusalReason.DENIED
