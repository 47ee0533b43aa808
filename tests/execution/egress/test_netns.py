"""A profile's network namespace, with real holders, real nsenter and real bwrap commands.

Each rule is checked from inside a sandboxed command entered with
``enter_argv()``; where a rule is "cannot reach", the same command run on the
host network is the control that shows the check can fail.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from multiplex.execution.egress._netns import ProfileNetwork

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("nsenter") is None,
    reason="needs bwrap and nsenter",
)

EGRESS = Path(__file__).parents[3] / "multiplex" / "execution" / "egress"
CONNECT = "exec 3<>/dev/tcp/{host}/{port}"
# The namespaces and confinement of multiplex's sandbox (_sandbox._BASE), with a
# plain read-only root: these tests are about the network, not the filesystem view.
_BASE = (
    *("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"),
    *("--die-with-parent", "--new-session", "--cap-drop", "ALL"),
    *(
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/run",
    ),
    # A checkout under /tmp or /run (a CI clone, its .venv with it) stays visible
    # over the fresh tmpfs: these tests run its interpreter inside.
    *(
        ("--ro-bind", str(EGRESS.parents[2]), str(EGRESS.parents[2]))
        if str(EGRESS.parents[2]).startswith(("/tmp/", "/run/"))
        else ()
    ),
)


def sandboxed(script: str) -> list[str]:
    return ["bwrap", *_BASE, "--", "bash", "-c", script]


def inside(network: ProfileNetwork, script: str) -> subprocess.CompletedProcess[str]:
    argv = [*network.enter_argv(), *sandboxed(script)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def on_host(script: str) -> subprocess.CompletedProcess[str]:
    """The control: the same sandbox on the host's network (today's ``network: on``)."""
    return subprocess.run(
        sandboxed(script), capture_output=True, text=True, timeout=30, check=False
    )


def ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def wait_ended(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ended(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def network() -> Iterator[ProfileNetwork]:
    with ProfileNetwork.start("a") as net:
        yield net


@pytest.fixture
def host_listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def test_the_namespace_holds_only_loopback_and_no_route(network: ProfileNetwork) -> None:
    done = inside(network, "cat /proc/self/net/dev; echo ROUTES; tail -n +2 /proc/self/net/route")
    assert done.returncode == 0, done.stderr
    devices, routes = done.stdout.split("ROUTES")
    names = [line.split(":")[0].strip() for line in devices.splitlines()[2:]]
    assert names == ["lo"]
    assert routes.strip() == ""
    host = on_host("tail -n +3 /proc/self/net/dev | cut -d: -f1")
    assert host.stdout.split() != ["lo"]  # the control: the host has more


def test_a_command_reaches_the_listener_and_the_supervisor_answers(network: ProfileNetwork) -> None:
    with network.listener() as listener:
        assert not listener.get_inheritable()  # never leaks into what the supervisor starts
        port = listener.getsockname()[1]
        script = (
            CONNECT.format(host="127.0.0.1", port=port)
            + "; echo ping >&3; read -r reply <&3; echo got $reply"
        )
        result: list[subprocess.CompletedProcess[str]] = []
        command = threading.Thread(target=lambda: result.append(inside(network, script)))
        command.start()
        listener.settimeout(20)
        connection, peer = listener.accept()
        with connection:
            assert peer[0] == "127.0.0.1"
            assert connection.makefile().readline() == "ping\n"
            connection.sendall(b"pong\n")
        command.join(30)
    assert result[0].stdout == "got pong\n", result[0].stderr


def test_an_ipv6_listener_on_the_namespace_loopback(network: ProfileNetwork) -> None:
    with network.listener(host="::1") as listener:
        script = CONNECT.format(host="::1", port=listener.getsockname()[1]) + "; echo six >&3"
        command = subprocess.Popen([*network.enter_argv(), *sandboxed(script)])
        listener.settimeout(20)
        connection, _ = listener.accept()
        with connection:
            assert connection.makefile().readline() == "six\n"
        assert command.wait(30) == 0


def test_the_host_loopback_is_out_of_reach(
    network: ProfileNetwork, host_listener: socket.socket
) -> None:
    script = (
        CONNECT.format(host="127.0.0.1", port=host_listener.getsockname()[1]) + " && echo CONNECTED"
    )
    assert "CONNECTED" in on_host(script).stdout  # the control: today this reaches the host
    done = inside(network, script)
    assert done.returncode != 0
    assert "CONNECTED" not in done.stdout
    assert "refused" in done.stderr


def test_the_host_addresses_are_out_of_reach(network: ProfileNetwork) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet: only picks the source address
        except OSError:
            pytest.skip("this host has no route off loopback")
        address = probe.getsockname()[0]
    with socket.create_server(("0.0.0.0", 0)) as server:
        script = CONNECT.format(host=address, port=server.getsockname()[1]) + " && echo CONNECTED"
        assert "CONNECTED" in on_host(script).stdout
        done = inside(network, script)
    assert done.returncode != 0
    assert "CONNECTED" not in done.stdout
    assert "unreachable" in done.stderr


def test_the_host_abstract_unix_sockets_are_out_of_reach(network: ProfileNetwork) -> None:
    """Abstract unix sockets belong to a network namespace: the host's (a desktop bus, say) stay behind."""
    name = f"mx-netns-probe-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind("\0" + name)
        server.listen()
        connect = (
            "import socket; s = socket.socket(socket.AF_UNIX);"
            f" s.connect(chr(0) + {name!r}); print('CONNECTED')"
        )
        script = f'{sys.executable} -I -S -c "{connect}"'
        assert "CONNECTED" in on_host(script).stdout
        done = inside(network, script)
    assert done.returncode != 0
    assert "CONNECTED" not in done.stdout
    assert "ConnectionRefusedError" in done.stderr


def test_two_profiles_do_not_share_a_namespace() -> None:
    with ProfileNetwork.start("a") as a, ProfileNetwork.start("b") as b, a.listener() as listener:
        script = (
            CONNECT.format(host="127.0.0.1", port=listener.getsockname()[1]) + " && echo CONNECTED"
        )
        from_a, from_b = inside(a, script), inside(b, script)
        assert "CONNECTED" in from_a.stdout, from_a.stderr
        assert "CONNECTED" not in from_b.stdout
        ids = {inside(net, "readlink /proc/self/ns/net").stdout for net in (a, b)}
        ids.add(os.readlink("/proc/self/ns/net") + "\n")
        assert len(ids) == 3


def test_a_command_cannot_take_over_a_listener_port(network: ProfileNetwork) -> None:
    """SO_REUSEPORT on the listener would let a command bind its port and take a share of the connections."""
    with network.listener() as listener:
        port = listener.getsockname()[1]
        steal = textwrap.dedent(f"""
            import socket
            for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
                s = socket.socket(family)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                try:
                    s.bind((host, {port}))
                    s.listen()
                    print("BOUND", host)
                except OSError as exc:
                    print("refused", host, exc.errno)
        """)
        done = inside(network, f"{sys.executable} -I -S -c '{steal}'")
    assert done.returncode == 0, done.stderr
    assert "BOUND" not in done.stdout
    assert done.stdout.count(f" {errno.EADDRINUSE}\n") == 3


def test_an_ended_holder_cannot_be_entered(network: ProfileNetwork) -> None:
    earlier = [*network.enter_argv(), *sandboxed("echo ENTERED")]
    os.kill(network.pid, signal.SIGKILL)
    assert wait_ended(network.pid)
    assert not network.alive
    with pytest.raises(OSError, match="has ended"):
        network.enter_argv()
    with pytest.raises(OSError, match="has ended"):
        network.listener()
    # An argv taken before the end: the pid is still ours (unreaped), its ns links are gone.
    done = subprocess.run(earlier, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode != 0
    assert "ENTERED" not in done.stdout
    network.close()
    done = subprocess.run(earlier, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode != 0
    assert "ENTERED" not in done.stdout


def test_close_ends_the_holder_and_is_idempotent() -> None:
    network = ProfileNetwork.start("a")
    earlier = [*network.enter_argv(), *sandboxed("echo ENTERED")]
    assert (
        "ENTERED"
        in subprocess.run(earlier, capture_output=True, text=True, timeout=30, check=False).stdout
    )
    network.close()
    network.close()
    assert not network.alive
    assert not os.path.exists(f"/proc/{network.pid}/ns") or ended(network.pid)
    with pytest.raises(OSError):
        network.enter_argv()


def test_the_holder_ends_when_its_control_socket_closes(network: ProfileNetwork) -> None:
    network._control.close()  # as if the supervisor's side were dropped
    assert wait_ended(network.pid, 2.0)  # by itself: close() would kill it only after 2 s
    network.close()


def test_the_holder_ends_with_the_supervisor_even_if_its_socket_leaked(tmp_path: Path) -> None:
    """The control socket leaked into another process never reads EOF: the pidfd still ends the holder."""
    script = textwrap.dedent("""
        import os, signal, subprocess, sys
        from multiplex.execution.egress._netns import ProfileNetwork
        net = ProfileNetwork.start("a")
        os.set_inheritable(net._control.fileno(), True)
        leak = subprocess.Popen(["sleep", "60"], close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(net.pid, leak.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    supervisor = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=EGRESS.parents[2],
    )
    holder, leak = (int(pid) for pid in supervisor.stdout.split())
    try:
        assert supervisor.returncode == -signal.SIGKILL
        assert not ended(leak)  # the socket is still open somewhere
        assert wait_ended(holder)
    finally:
        os.kill(leak, signal.SIGKILL)


def test_the_holder_keeps_no_inherited_fd_and_gives_up_the_filesystem(
    network: ProfileNetwork,
) -> None:
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        with ProfileNetwork.start("b") as other:
            fds = {
                fd: os.readlink(f"/proc/{other.pid}/fd/{fd}")
                for fd in os.listdir(f"/proc/{other.pid}/fd")
            }
            with open(f"/proc/{other.pid}/status") as status:
                no_new_privs = "NoNewPrivs:\t1" in status.read()
    finally:
        os.close(read)
        os.close(write)
    assert fds.keys() == {"0", "1", "2", "3"}
    assert fds["0"].startswith("socket:")
    assert fds["1"] == fds["2"] == "/dev/null"
    assert fds["3"] == "anon_inode:[pidfd]"
    assert no_new_privs  # set only on the way to Landlock


def test_landlock_leaves_the_holder_no_file_to_open(tmp_path: Path) -> None:
    probe = textwrap.dedent(f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("holder", {str(EGRESS / "_holder.py")!r})
        holder = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(holder)
        holder._no_filesystem()
        for path, mode in (("/etc/hostname", "r"), ({str(tmp_path / "written")!r}, "w")):
            try:
                open(path, mode)
                print("OPENED", path)
            except PermissionError:
                pass
    """)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "OPENED" not in done.stdout
    assert not (tmp_path / "written").exists()


def test_a_taken_port_is_an_error_and_the_network_goes_on(network: ProfileNetwork) -> None:
    with network.listener() as first:
        port = first.getsockname()[1]
        with pytest.raises(OSError, match="in use"):
            network.listener(port)
        with network.listener() as second:
            assert second.getsockname()[1] != port
    with pytest.raises(ValueError):
        network.listener(70000)
    with pytest.raises(ValueError):
        network.listener(host="0.0.0.0")
    assert network.alive


def test_listeners_asked_from_many_threads_each_get_their_own_port(network: ProfileNetwork) -> None:
    # Held open until all 40 are known: a port closed at once may be handed out again,
    # and two threads asking for the same number would race for it.
    probes = [network.listener() for _ in range(40)]
    ports = [probe.getsockname()[1] for probe in probes]
    for probe in probes:
        probe.close()
    assert len(set(ports)) == 40
    got: dict[int, int] = {}
    errors: list[BaseException] = []

    def ask(mine: list[int]) -> None:
        for port in mine:
            try:
                with network.listener(port) as listener:
                    got[port] = listener.getsockname()[1]
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=ask, args=(ports[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert got == {port: port for port in ports}


def test_no_namespaces_is_one_line_os_error() -> None:
    """Run the supervisor where user namespaces are off (bwrap --disable-userns): start says why."""
    script = (
        "from multiplex.execution.egress._netns import ProfileNetwork\nProfileNetwork.start('a')\n"
    )
    argv = [
        "bwrap",
        *_BASE,
        "--disable-userns",
        "--chdir",
        str(EGRESS.parents[2]),
        "--",
        sys.executable,
        "-c",
        script,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("OSError: profile a: no network namespace: ")
    assert "unshare" in last


def test_without_nsenter_start_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OSError, match="nsenter"):
        ProfileNetwork.start("a")


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_an_unprivileged_supervisor(tmp_path: Path, host_listener: socket.socket) -> None:
    """The same namespace made and entered by a non-root uid (its python is the system one: the venv's may be unreadable)."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip(
            "needs root and setpriv to become another uid (a non-root run tests this everywhere)"
        )
    python = shutil.which("python3", path="/usr/bin:/bin")
    probe = [*NOBODY, "unshare", "--user", "--net", "true"]
    if python is None or subprocess.run(probe, check=False).returncode != 0:
        pytest.skip("no system python3, or user namespaces are not allowed for uid 65534 here")
    host_port = host_listener.getsockname()[1]
    script = textwrap.dedent(f"""
        import importlib.util, os, subprocess, sys
        def load(name, path):
            spec = importlib.util.spec_from_file_location(name, path)
            module = sys.modules[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        load("multiplex.execution.egress._holder", {str(EGRESS / "_holder.py")!r})
        netns = load("multiplex.execution.egress._netns", {str(EGRESS / "_netns.py")!r})
        base = {list(_BASE)!r}
        with netns.ProfileNetwork.start("a") as net, net.listener() as listener:
            port = listener.getsockname()[1]
            sh = (f"id -u; exec 3<>/dev/tcp/127.0.0.1/{{port}} && echo REACHED; "
                  f"exec 4<>/dev/tcp/127.0.0.1/{host_port} && echo HOST")
            command = subprocess.Popen([*net.enter_argv(), "bwrap", *base, "--", "bash", "-c", sh],
                                       stdout=subprocess.PIPE, text=True)
            listener.settimeout(20)
            connection, _ = listener.accept()
            print(command.communicate(timeout=30)[0], end="")
            connection.close()
    """)
    done = subprocess.run(
        [*NOBODY, python, "-I", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "65534",
        "REACHED",
    ]  # its uid kept; the listener reached, the host not
