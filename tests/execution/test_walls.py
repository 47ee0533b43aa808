"""docs/security.md#the-walls: what a sandboxed command reaches when the gate lets it through.

Every profile here has ``approvals.mode: off``: only the operating system stands
between the command and the prize (real bwrap, a real egress proxy, real
curl, a real Redis).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from multiplex import Supervisor
from multiplex.execution import bwrap_status

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason=f"bwrap: {bwrap_status()[1]}")

OFF = "approvals:\n  mode: 'off'\n"


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"HELLO-FROM-ORIGIN\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def origin() -> Iterator[int]:
    """A real HTTP server on the host's loopback (the gateway, Redis or a metadata service stand-in)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def canaries(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """Canary files where a command must never read: the supervisor's HOME, a sibling project, state."""
    token = secrets.token_hex(8)
    home_canary = Path.home() / f".multiplex-wall-canary-{token}"
    home_canary.write_text(f"HOME-CANARY-{token}\n")
    sibling = tmp_path / "sibling-project"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(f"SIBLING-CANARY-{token}\n")
    state = tmp_path / ".multiplex"
    state.mkdir()
    (state / "admin-token").write_text(f"ADMIN-CANARY-{token}\n")
    try:
        yield {
            "home": home_canary,
            "sibling": sibling / "secret.txt",
            "state": state / "admin-token",
        }
    finally:
        home_canary.unlink(missing_ok=True)


def _sup(make_home, supervisor_of, text: str, name: str = "p") -> Supervisor:  # type: ignore[no-untyped-def]
    make_home(name, "terminal:\n  sandbox: bwrap\n" + text + OFF)
    return supervisor_of("profiles_dir: profiles\n")  # type: ignore[no-any-return]


def _run(sup: Supervisor, command: str, profile: str = "p"):  # type: ignore[no-untyped-def]
    result = sup.run(command, profile=profile, context="cron")
    assert result.decision.approved, result.decision
    return result


# --- the view: an empty root with what a command needs bound in ------------------


def test_the_supervisors_home_a_sibling_project_and_the_state_folder_are_unreadable(
    make_home, supervisor_of, canaries: dict[str, Path]
) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, "")
    for name, path in canaries.items():
        done = _run(sup, f"cat {path}; ls {path.parent}")
        assert "CANARY" not in done.stdout, (name, done.stdout)
    # Not even by name: HOME inside is the profile's own workspace.
    done = _run(sup, "echo $HOME; ls -a ~; ls /home /srv /opt /mnt /root 2>&1")
    assert done.stdout.splitlines()[0] == str(sup.profiles["p"].home / "workspace")
    assert canaries["home"].name not in done.stdout


def test_the_state_folder_stays_hidden_when_the_cwd_is_the_project_folder(
    make_home, supervisor_of, canaries: dict[str, Path], tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The operator named the folder of multiplex.yaml as cwd: its .multiplex/ is still hidden."""
    sup = _sup(make_home, supervisor_of, f"  cwd: {tmp_path}\n")
    done = _run(sup, "cat .multiplex/admin-token; cat multiplex.yaml; ls -a")
    assert "ADMIN-CANARY" not in done.stdout
    assert "profiles_dir" not in done.stdout
    assert "sibling-project" in done.stdout  # named by the operator: shown


@pytest.mark.parametrize(
    "path",
    ["/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private"],
)
def test_the_secrets_of_etc_are_not_shown(make_home, supervisor_of, path: str) -> None:  # type: ignore[no-untyped-def]
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist on this host")
    sup = _sup(make_home, supervisor_of, "")
    done = _run(sup, f"cat {path} 2>/dev/null | head -c 200; [ -d {path} ] && ls -A {path}")
    assert done.stdout.strip() == "", done.stdout
    # /etc itself is there: users, hosts, certificates.
    assert "root:" in _run(sup, "cat /etc/passwd").stdout


def test_host_folders_outside_the_runtime_are_absent(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, "")
    done = _run(
        sup,
        "for d in /home /srv /var/lib /var/log /opt /mnt /media /sys; do ls -A $d 2>/dev/null | head -1; done; echo END",
    )
    assert done.stdout.strip() == "END", done.stdout


def test_read_paths_are_shown_read_only(make_home, supervisor_of, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "datasets"
    data.mkdir()
    (data / "a.csv").write_text("x,y\n")
    sup = _sup(make_home, supervisor_of, f"  read_paths: [{data}]\n")
    done = _run(sup, f"cat {data}/a.csv; touch {data}/new 2>&1; echo rc=$?")
    assert "x,y" in done.stdout and "rc=1" in done.stdout
    assert not (data / "new").exists()


@pytest.mark.parametrize("key", ["read_paths", "writable_paths"])
def test_a_sandbox_path_through_a_link_is_refused_at_load(
    make_home, supervisor_of, tmp_path: Path, key: str
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    make_home("p", f"terminal:\n  {key}: [{tmp_path / 'link'}]\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    error = sup.profiles["p"].error or ""
    assert f"terminal.{key}.0" in error and "symlink" in error, error


@pytest.mark.parametrize("item", ["'.'", "'{home}'"])
def test_the_home_itself_as_a_writable_path_is_refused_at_load(
    make_home, supervisor_of, tmp_path: Path, item: str
) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "profiles" / "p"
    make_home("p", f"terminal:\n  writable_paths: [{item.format(home=home)}]\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    error = sup.profiles["p"].error or ""
    assert "terminal.writable_paths.0" in error and "profile home itself" in error, error


def test_a_read_path_must_be_absolute(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "terminal:\n  read_paths: [data]\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    assert "terminal.read_paths" in (sup.profiles["p"].error or "")


# --- the home folder is never writable: a planted intent never becomes a rule --------


@pytest.mark.parametrize("cwd", ["null", "'.'", "'{home}'"])
def test_no_command_can_plant_an_allowlist_intent_in_its_home(
    make_home, supervisor_of, tmp_path: Path, cwd: str
) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "profiles" / "p"
    sup = _sup(make_home, supervisor_of, f"  cwd: {cwd.format(home=home)}\n")
    intent = f"{home}/.config.yaml.allowlist-intent-00000000000000000001-1-aaaa.json"
    done = _run(sup, f'pwd; echo \'["bash *","sh *","curl *"]\' > {intent}; echo rc=$?')
    assert done.stdout.splitlines()[0] == str(home / "workspace")
    assert "rc=1" in done.stdout and not os.path.exists(intent)
    for name in ("config.yaml", "config.yaml.lock", "logs/decisions.jsonl"):
        _run(sup, f"echo x >> {home}/{name}")
    sup.profiles["p"].allowlist.grant("git status")
    assert "bash *" not in (home / "config.yaml").read_text()


# --- the syscall floor --------------------------------------------------------------


def test_no_new_privs_and_the_seccomp_filter_are_on_for_every_command(
    make_home, supervisor_of
) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, "")
    status = _run(sup, "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status").stdout
    assert "NoNewPrivs:\t1" in status and "Seccomp:\t2" in status
    probe = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        "r = libc.ptrace(0, 0, 0, 0); print('ptrace', r, os.strerror(ctypes.get_errno()))"
    )
    done = _run(sup, f"{sys.executable} -c {json.dumps(probe)}")
    assert "ptrace -1 Operation not permitted" in done.stdout, done.stdout + done.stderr
    assert "Operation not permitted" in _run(sup, "unshare -U true 2>&1").stdout


# --- egress: out only through the profile's proxy ------------------------------------


def test_network_on_reaches_no_host_port_directly_or_through_the_proxy(
    make_home, supervisor_of, origin: int
) -> None:  # type: ignore[no-untyped-def]
    """The gateway's port and Redis on loopback are the prize: unreachable under the default."""
    sup = _sup(make_home, supervisor_of, "")  # network: on is the default
    direct = _run(sup, f"exec 3<>/dev/tcp/127.0.0.1/{origin} && echo CONNECTED")
    assert "CONNECTED" not in direct.stdout
    proxied = _run(
        sup, f"curl -sS -m 5 http://127.0.0.1:{origin}/; curl -sS -m 5 http://localhost:{origin}/"
    )
    assert "HELLO-FROM-ORIGIN" not in proxied.stdout
    assert f"multiplex egress: refused 127.0.0.1:{origin}" in proxied.stderr
    assert len(proxied.egress_refused) == 2
    records = [
        json.loads(line)
        for line in (sup.profiles["p"].home / "logs/decisions.jsonl").read_text().splitlines()
    ]
    egress = [r for r in records if r.get("kind") == "egress"]
    assert [r["command"] for r in egress] == [
        f"egress 127.0.0.1:{origin}",
        f"egress localhost:{origin}",
    ]
    assert all(r["outcome"] == "blocked" and r["decided_by"] == "policy" for r in egress)


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::1]:9/",
        "http://100.64.0.1/",
    ],
)
def test_metadata_and_private_ranges_are_refused_before_any_connection(
    make_home, supervisor_of, target: str
) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, "")
    done = _run(sup, f"curl -sS -m 5 {target}")
    assert "multiplex egress: refused" in done.stderr, done.stderr


def test_a_socks_connection_to_redis_is_refused(
    make_home, supervisor_of, redis_server: Any
) -> None:  # type: ignore[no-untyped-def]
    port = int(redis_server.port)
    sup = _sup(make_home, supervisor_of, "")
    done = _run(
        sup,
        f"printf 'PING\\r\\n' | curl -sS -m 5 telnet://127.0.0.1:{port}; redis-cli -p {port} PING 2>&1",
    )
    assert "PONG" not in done.stdout and "NOAUTH" not in done.stdout
    assert f"refused 127.0.0.1:{port}" in done.stderr


def test_an_allowed_host_is_reached_through_the_proxy(
    make_home, supervisor_of, origin: int
) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, f"  egress:\n    allow: ['127.0.0.1:{origin}']\n")
    done = _run(
        sup,
        f"curl -sS -m 5 http://127.0.0.1:{origin}/; curl -sS -m 5 http://127.0.0.1:{origin + 1}/",
    )
    assert "HELLO-FROM-ORIGIN" in done.stdout
    assert f"refused 127.0.0.1:{origin + 1} (not in egress.allow)" in done.stderr


def test_deny_wins_over_allow(make_home, supervisor_of, origin: int) -> None:  # type: ignore[no-untyped-def]
    rules = f"  egress:\n    allow: ['127.0.0.1:{origin}']\n    deny: ['127.0.0.1']\n"
    sup = _sup(make_home, supervisor_of, rules)
    done = _run(sup, f"curl -sS -m 5 http://127.0.0.1:{origin}/")
    assert "HELLO-FROM-ORIGIN" not in done.stdout and "(in egress.deny)" in done.stderr


def test_network_host_is_explicit_and_warned(make_home, supervisor_of, origin: int) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, "  network: host\n")
    assert any("network: host" in w for w in sup.view("p").warnings)
    assert "HELLO" in _run(sup, f"curl -sS -m 5 --noproxy '*' http://127.0.0.1:{origin}/").stdout


def test_network_off_has_no_proxy_and_no_way_out(make_home, supervisor_of, origin: int) -> None:  # type: ignore[no-untyped-def]
    sup = _sup(make_home, supervisor_of, "  network: 'off'\n")
    done = _run(sup, f"env | grep -i _proxy=; echo END; curl -sS -m 5 http://127.0.0.1:{origin}/")
    assert done.stdout.splitlines()[0] == "END" and "HELLO" not in done.stdout, done.stdout


def test_two_profiles_have_namespaces_of_their_own(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("q", "terminal:\n  sandbox: bwrap\n" + OFF)
    sup = _sup(make_home, supervisor_of, "")
    mine = _run(sup, "readlink /proc/self/ns/net").stdout
    theirs = _run(sup, "readlink /proc/self/ns/net", "q").stdout
    assert mine != theirs and mine.strip() != os.readlink("/proc/self/ns/net")


def test_a_bad_egress_pattern_refuses_the_config(make_home, supervisor_of) -> None:  # type: ignore[no-untyped-def]
    make_home("p", "terminal:\n  egress:\n    allow: ['http://pypi.org/simple']\n")
    sup = supervisor_of("profiles_dir: profiles\n")
    assert "terminal.egress.allow" in (sup.profiles["p"].error or "")


def test_the_gateway_port_is_protected_even_when_loopback_is_allowed(
    make_home, supervisor_of, origin: int
) -> None:  # type: ignore[no-untyped-def]
    from multiplex.execution.egress import default_hub

    default_hub().protect_host("127.0.0.1", origin)  # as `multiplex up` does for its own port
    sup = _sup(make_home, supervisor_of, "  egress:\n    allow: ['127.0.0.1']\n")
    done = _run(sup, f"curl -sS -m 5 http://127.0.0.1:{origin}/")
    assert "HELLO" not in done.stdout and "protected" in done.stderr


def test_sandbox_argv_without_the_way_in_is_loopback_only(
    make_home, supervisor_of, origin: int
) -> None:  # type: ignore[no-untyped-def]
    """A caller of the Python API that gives no namespace never gets the host's network."""
    import subprocess

    from multiplex.execution import sandbox_argv, seccomp_fd

    sup = _sup(make_home, supervisor_of, "")
    floor = seccomp_fd()
    try:
        with sup.turn("p", "s", "api") as scope:
            argv = sandbox_argv(scope, hidden=sup.hidden_paths, seccomp=floor)
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{origin} && echo CONNECTED"
        done = subprocess.run(
            [*argv, "bash", "-c", probe],
            capture_output=True,
            text=True,
            pass_fds=(floor,),
            check=False,
        )
    finally:
        os.close(floor)
    assert "CONNECTED" not in done.stdout and "--unshare-net" in argv


def test_the_cli_reports_a_refusal_on_stderr(make_home, tmp_path: Path, origin: int) -> None:  # type: ignore[no-untyped-def]
    """`multiplex exec` (no metrics exported) counts and records a refusal without failing."""
    from tests.conftest import run_cli

    make_home("p", "terminal:\n  sandbox: bwrap\n" + OFF)
    (tmp_path / "multiplex.yaml").write_text("profiles_dir: profiles\n")
    done = run_cli(
        "exec", "-p", "p", "--", f"curl -sS -m 5 http://127.0.0.1:{origin}/", cwd=tmp_path
    )
    assert f"multiplex egress: refused 127.0.0.1:{origin}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "HELLO" not in done.stdout
