"""Servers that hand a shell or code execution to whoever connects (docs/security.md#named-patterns).

Named ``reverse-shell`` as a shell bound to a socket is: a terminal served over the web
(``ttyd``, ``gotty``, ``wetty``, ``shellinaboxd``, ``websocketd``), a shared terminal
(``tmate``, ``upterm``), a login server started by the agent (``sshd``, ``dropbear``,
``telnetd``, ``busybox telnetd``), an editor without authentication (``code-server
--auth none``), and a debugger, notebook or container API listening beyond loopback
(``node --inspect=0.0.0.0``, ``python -m debugpy --listen 0.0.0.0:5678``, ``jupyter
--ip=0.0.0.0`` with an empty token, ``dockerd -H tcp://0.0.0.0:2375``), and a login port
tunnelled out (``ngrok tcp 22``, ``bore local 22``, ``cloudflared tunnel --url
ssh://…``, ``ssh -R 2222:localhost:22 HOST``, ``chisel client SERVER R:2222:localhost:22``), or
every port of this machine (a reverse SOCKS proxy: ``ssh -R 1080 HOST``, ``chisel client
SERVER R:socks``). A pure leaf.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.parsing._argv import option_values
from multiplex.shell.parsing._parsed import SimpleCommand
from multiplex.shell.parsing.runs._verbs import kube_words

__all__ = ["SERVERS", "serves_remote_access"]

_ALWAYS = frozenset({"ttyd", "gotty", "wetty", "shellinaboxd", "websocketd", "tmate", "upterm",
                     "sshd", "dropbear", "telnetd", "in.telnetd", "utelnetd"})  # fmt: skip
_NODES = frozenset({"node", "nodejs", "deno", "bun"})
_JUPYTER = frozenset({"jupyter", "jupyter-notebook", "jupyter-lab", "jupyter-server"})
_TOKENS = ("--NotebookApp.token", "--ServerApp.token", "--IdentityProvider.token")
# Every program serves_remote_access looks at (and python*): the callers' first test.
SERVERS = frozenset({*_ALWAYS, *_NODES, *_JUPYTER, "busybox", "code-server",
                     "openvscode-server", "dockerd", "ngrok", "bore", "cloudflared", "ssh",
                     "autossh", "socat", "kubectl", "oc", "chisel"})  # fmt: skip
# A container engine's socket: whoever reaches it is root on the host.
_ENGINE_SOCKETS = ("docker.sock", "podman.sock", "containerd.sock", "crio.sock")


def _beyond_loopback(address: str) -> bool:
    """``HOST:PORT``, ``HOST`` or a port: whether it listens beyond loopback (a bare port
    listens where the program's default does, loopback for these)."""
    host = address.rsplit(":", 1)[0] if ":" in address and not address.startswith("[") else address
    host = host.removeprefix("tcp://").strip("[]")
    if not host or host.isdigit():
        return False
    return not (host == "localhost" or host.startswith("127.") or host == "::1")


def serves_remote_access(cmd: SimpleCommand) -> bool:
    """``cmd`` serves a shell, a debugger or an unauthenticated code runner to the network."""
    prog, args = cmd.program, cmd.argv[1:]
    if prog in _ALWAYS:
        return True
    if prog == "busybox":
        return args[:1] == ("telnetd",)
    if prog in ("code-server", "openvscode-server"):
        return "none" in option_values(args, ("--auth",)) or "--without-connection-token" in args
    if prog in _NODES:
        inspect = [a.partition("=")[2] for a in args if a.startswith("--inspect") and "=" in a]
        return any(_beyond_loopback(v) for v in inspect)
    if prog.startswith("python") and "debugpy" in args[:2]:
        return any(_beyond_loopback(v) for v in option_values(args, ("--listen",)))
    if prog in _JUPYTER:
        open_to_all = any(_beyond_loopback(v) for v in option_values(args, ("--ip",)))
        return open_to_all and any(not v.strip("'\"") for v in option_values(args, _TOKENS))
    if prog == "dockerd":
        hosts = option_values(args, ("-H", "--host"))
        return any(h.startswith("tcp://") and _beyond_loopback(h) for h in hosts)
    if prog == "socat":  # socat TCP-LISTEN:2375,fork UNIX-CONNECT:/var/run/docker.sock
        listens = any(a.upper().startswith(("TCP-L", "TCP4-L", "TCP6-L")) for a in args)
        return listens and any(s in a for a in args for s in _ENGINE_SOCKETS)
    if prog in ("kubectl", "oc"):  # kubectl proxy --address=0.0.0.0: the cluster, signed in
        words = kube_words(args)  # (port-forward --address 0.0.0.0: a pod's port, its database)
        return words[:1] in (["proxy"], ["port-forward"]) and any(
            _beyond_loopback(a) for v in option_values(args, ("--address",)) for a in v.split(",")
        )
    return _tunnels_a_shell(prog, args)


# A local login port (ssh's) forwarded to the outside: ngrok tcp 22, bore local 22,
# cloudflared tunnel --url ssh://localhost:22, ssh -R 2222:localhost:22 HOST.
_LOGIN_PORTS = frozenset({"22", "2222", "23"})
# What is as good as a login: a container engine's API (root on the host), a kubelet's.
_ENGINE_PORTS = frozenset({"2375", "2376", "10250"})
_FORWARDED = _LOGIN_PORTS | _ENGINE_PORTS


def _shell_behind(forward: str) -> bool:
    """A forward's local end is a login, an engine's API or an engine's socket."""
    return forward.rsplit(":", 1)[-1] in _FORWARDED or any(s in forward for s in _ENGINE_SOCKETS)


def _tunnels_a_shell(prog: str, args: Sequence[str]) -> bool:
    ops = [a for a in args if not a.startswith("-")]
    if prog == "ngrok":
        return ops[:1] == ["tcp"] and any(_shell_behind(o) for o in ops[1:2])
    if prog == "bore":
        return ops[:1] == ["local"] and ops[1:2] != [] and ops[1] in _FORWARDED
    if prog == "cloudflared":
        urls = option_values(args, ("--url",))
        return any(u.startswith("ssh://") or _shell_behind(u) for u in urls)
    if prog in ("ssh", "autossh"):
        forwards = option_values(args, ("-R",)) + [
            a[2:] for a in args if a.startswith("-R") and len(a) > 2
        ]
        settings = option_values(args, ("-o",)) + [a[2:] for a in args if a.startswith("-o")]
        forwards += [
            value.strip()
            for key, _, value in (o.replace("=", " ", 1).partition(" ") for o in settings)
            if key.lower() == "remoteforward"
        ]
        # -R [BIND:]PORT alone is a reverse SOCKS proxy: the far end reaches everything here
        return any(_shell_behind(f.replace(" ", ":")) or f.count(":") < 2 for f in forwards)
    if prog == "chisel":  # chisel client SERVER R:socks | R:2222:localhost:22
        remotes = [o[2:] for o in ops[1:] if o.startswith("R:")] if ops[:1] == ["client"] else []
        return any(r.startswith("socks") or _shell_behind(r) for r in remotes)
    return False
