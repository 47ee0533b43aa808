"""The machine's own firewall, network and settings (docs/security.md#named-patterns,
``shell/detection/_system_checks.py``).

Each hostile line below was approved in the manual home before: a firewall closed to
everything by a default policy or an unnarrowed DROP rule, the network taken down or
its default route removed, the kernel's parameters, the clock or the host's name
changed. Reading any of them, or a narrowed rule, stays approved.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import APPROVED, assert_named, homes_fixture, outcome

sup = homes_fixture("machine_settings", ["ip *", "iptables *", "sysctl *", "date *"])

CHANGED = [
    ("iptables -P INPUT DROP", "firewall-change"),
    ("iptables --policy OUTPUT REJECT", "firewall-change"),
    ("iptables -A INPUT -j DROP", "firewall-change"),
    ("ip6tables -I OUTPUT 1 -j REJECT", "firewall-change"),
    ("ip link set eth0 down", "network-change"),
    ("ip l s eth0 down", "network-change"),
    ("ip route del default", "network-change"),
    ("ip r del default via 10.0.0.1", "network-change"),
    ("ip route flush table main", "network-change"),
    ("ip addr flush dev eth0", "network-change"),
    ("ifconfig eth0 down", "network-change"),
    ("ifdown eth0", "network-change"),
    ("route del default", "network-change"),
    ("nmcli networking off", "network-change"),
    ("nmcli radio all off", "network-change"),
    ("nmcli device disconnect eth0", "network-change"),
    ("sysctl -w kernel.panic=1", "system-setting"),
    ("sysctl net.ipv4.ip_forward=1", "system-setting"),
    ("sysctl -p /tmp/evil.conf", "system-setting"),
    ("date -s '2020-01-01'", "system-setting"),
    ("date --set=2020-01-01", "system-setting"),
    ("timedatectl set-time '2020-01-01'", "system-setting"),
    ("timedatectl set-ntp false", "system-setting"),
    ("hwclock --set --date '2020-01-01'", "system-setting"),
    ("hostnamectl set-hostname x", "system-setting"),
    ("hostname evil", "system-setting"),
]
READ_OR_NARROW = [
    "iptables -L -n",
    "iptables -A INPUT -s 1.2.3.4 -j DROP",
    "iptables -A INPUT -p tcp --dport 22 -j ACCEPT",
    "iptables -P INPUT ACCEPT",
    "ip a",
    "ip link show",
    "ip route",
    "ip r get 1.1.1.1",
    "ip link set eth0 up",
    "ip route flush cache",
    "ifconfig",
    "nmcli dev status",
    "sysctl -a",
    "sysctl kernel.panic",
    "date",
    "date +%F",
    "date -d yesterday +%s",
    "timedatectl status",
    "hwclock --show",
    "hostname",
    "hostname -f",
    "hostnamectl",
]


@pytest.mark.parametrize(("line", "pattern"), CHANGED)
def test_the_machines_settings_changed_ask(sup: Supervisor, line: str, pattern: str) -> None:
    assert_named(sup, line, pattern)


@pytest.mark.parametrize("line", READ_OR_NARROW)
def test_reading_them_or_a_narrowed_rule_does_not(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "manual", line) == APPROVED


STOPPED = [
    ("systemctl rescue", "service-stop"),
    ("systemctl emergency", "service-stop"),
    ("fuser -k 80/tcp", "process-kill"),
    ("fuser -km /home", "process-kill"),
    ("sv stop nginx", "service-stop"),
    ("supervisorctl stop all", "service-stop"),
    ("pm2 delete all", "service-stop"),
    ("pm2 kill", "service-stop"),
    ("docker stop $(docker ps -q)", "service-stop"),
    ("docker kill $(docker ps -q)", "service-stop"),
    ("kubectl scale deploy --all --replicas=0", "service-stop"),
    ("kubectl scale deploy x --replicas 0", "service-stop"),
]
RUNNING = [
    "fuser 80/tcp", "sv status nginx", "pm2 list", "pm2 restart all", "supervisorctl status",
    "docker stop web", "kubectl scale deploy x --replicas=3",
]  # fmt: skip


@pytest.mark.parametrize(("line", "pattern"), STOPPED)
def test_services_and_processes_stopped_by_more_tools_ask(
    sup: Supervisor, line: str, pattern: str
) -> None:
    assert_named(sup, line, pattern)


@pytest.mark.parametrize("line", RUNNING)
def test_their_reads_and_restarts_do_not(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "manual", line) == APPROVED


FLOODS = [
    "for i in $(seq 1 100000); do sleep 100 & done",
    "for i in $(seq 5000); do sh -c 'sleep 9' & done",
    "for i in {1..5000}; do sleep 9 & done",
    "for ((i=0; i<5000; i++)); do sleep 9 & done",
    "parallel -j0 sleep ::: $(seq 100000)",
]
FEW_OR_WAITED = [
    "for i in $(seq 10); do sleep 1 & done; wait",
    "for i in {1..3}; do make job$i & done",
    "for f in *.txt; do gzip $f & done",
    "for i in $(seq 100000); do echo $i; done",
    "for i in $(seq 5000); do sleep 0 & wait; done",
    "parallel -j0 echo ::: a b c",
]


@pytest.mark.parametrize("line", FLOODS)
def test_a_thousand_background_jobs_at_once_are_a_fork_bomb(sup: Supervisor, line: str) -> None:
    verdict = sup.test("manual", line, context="api")
    assert verdict.outcome == "blocked" and "fork-bomb" in verdict.cause, line


@pytest.mark.parametrize("line", FEW_OR_WAITED)
def test_a_few_jobs_or_waited_ones_are_not(sup: Supervisor, line: str) -> None:
    assert "fork-bomb" not in sup.test("manual", line, context="api").cause
