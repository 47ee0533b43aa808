"""One ipykernel process, driven with jupyter-client (docs/kernels.md#lifecycle).

jupyter-client launches the kernel (its own session and process group), frames
and signs every message, and shuts it down. This module adds what a supervisor
needs on top: a private runtime directory (connection file, ipc sockets, the
tool channel), a cell with a deadline and a cancel switch, output collected
for that cell only and capped, and a kill that ends the whole process tree and
then proves every process of it dead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import zmq
from jupyter_client.session import Session

from multiplex.execution._local import _materialise
from multiplex.execution.egress import EgressSession, default_hub
from multiplex.execution.kernels._cells import KernelError, RawCell
from multiplex.execution.kernels._channel import Dispatch, ToolChannel
from multiplex.execution.kernels._manager import SpecManager
from multiplex.execution.kernels._output import Collector, finish, on_iopub, read_answers
from multiplex.execution.kernels._proctree import kill_and_prove, memory_bytes, tree
from multiplex.execution.kernels._spawn import KernelSpawn, kernel_argv
from multiplex.execution.sandbox._sandbox import (
    SANDBOX_CREDENTIALS,
    bwrap_status,
    choose_sandbox,
    sandbox_argv,
    workspace_of,
)
from multiplex.execution.sandbox._seccomp import seccomp_fd
from multiplex.kernel import CELL_METADATA_KEY, IOPUB_COUNT_KEY, RESULT_KEY
from multiplex.scopes import ProfileScope

__all__ = ["KernelProcess"]

START_TIMEOUT = 60.0
_SLICE = 0.1  # how often a waiting cell looks at its deadline, cancel switch and process
# Longest silence on IOPub, once the reply is in, before the messages it counted
# are taken as lost (a full subscriber queue drops them) and the cell settles.
_LATE = 2.0
_ENGINE_ENV = ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR")


class KernelProcess:
    """A started kernel: run cells one at a time, kill it, prove it dead."""

    def __init__(
        self, spawn: KernelSpawn, runtime: Path, creds: Path | None, channel: ToolChannel
    ) -> None:
        self.spawn = spawn
        self.runtime = runtime
        self.creds = creds
        self.channel = channel
        self.started = time.time()
        self.pid = 0
        self.start_notes: tuple[str, ...] = ()  # credential files that were not mounted
        self.sandbox = "none"  # or "bwrap"
        self._km: SpecManager | None = None
        self._session: Session | None = None
        self._shell: zmq.Socket[bytes] | None = None
        self._iopub: zmq.Socket[bytes] | None = None
        self._poller = zmq.Poller()
        self._ended = False
        self._end_lock = threading.Lock()
        self.egress: EgressSession | None = None  # docs/execution.md#egress, for its lifetime

    # -- start ----------------------------------------------------------------------
    @classmethod
    def start(
        cls,
        scope: ProfileScope,
        spawn: KernelSpawn,
        dispatch: Dispatch,
        *,
        hidden: Sequence[Path] = (),
    ) -> KernelProcess:
        """Start a kernel in ``scope``'s cwd with ``spawn.env``; raises KernelError.

        The kernel runs inside the profile's bubblewrap sandbox when its
        ``terminal.sandbox`` resolves to ``bwrap`` (docs/execution.md#the-sandbox),
        exactly as its shell commands do; ``hidden`` are the paths it never sees.
        """
        workspace = workspace_of(scope)  # the default cwd: made on first use
        if spawn.cwd is not None and not spawn.cwd.is_dir():
            raise KernelError(f"working directory does not exist: {spawn.cwd}")
        choice = choose_sandbox(scope.view.terminal.sandbox)
        if choice.error is not None:
            raise KernelError(choice.error)  # fail closed: never unsandboxed instead
        runtime = Path(tempfile.mkdtemp(prefix="mxk-"))  # 0700: keys, sockets, credentials
        creds: Path | None = None
        kernel: KernelProcess | None = None
        try:
            creds, refused = _materialise(scope)
            sandboxed = choice.sandbox == "bwrap"
            env = dict(spawn.env)
            if creds is not None:
                env["CREDENTIALS_DIRECTORY"] = SANDBOX_CREDENTIALS if sandboxed else str(creds)
            channel = ToolChannel(runtime / "tools.sock", dispatch)
            kernel = cls(spawn, runtime, creds, channel)
            kernel.sandbox = choice.sandbox
            kernel.start_notes = tuple(refused)
            confine: list[str] = []
            floor: int | None = None
            if sandboxed:
                # docs/execution.md#the-sandbox: never the supervisor's HOME
                if workspace is not None:
                    env["HOME"] = str(workspace)
                if scope.view.terminal.network == "on":
                    egress = scope.view.terminal.egress
                    try:
                        kernel.egress = default_hub().open(
                            scope.name, scope.home, egress.allow, egress.deny, tag=None
                        )
                    except OSError as exc:  # fail closed: never the host's network
                        raise KernelError(f"terminal.network: on, but {exc}") from None
                    env.update(kernel.egress.env)
                floor = seccomp_fd()
                confine = sandbox_argv(
                    scope,
                    hidden=hidden,
                    credentials=creds,
                    seccomp=floor,
                    bwrap=bwrap_status()[1],
                    enter=() if kernel.egress is None else kernel.egress.enter,
                )
                # The runtime directory (sockets, engine state) is the kernel's too;
                # /tmp is a fresh tmpfs inside, so it is bound explicitly.
                confine[-1:-1] = ["--bind", str(runtime), str(runtime)]
            note = runtime / "channel.json"
            fd = os.open(note, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"socket": str(channel.path), "key": channel.key, "env": env}, handle)
            try:
                kernel._launch(
                    confine + kernel_argv(runtime),
                    env,
                    independent=sandboxed,
                    pass_fds=() if floor is None else (floor,),
                )
            except OSError as exc:
                raise KernelError(
                    f"the kernel could not be started: {exc.strerror or exc}"
                ) from None
            finally:
                if floor is not None:
                    os.close(floor)  # bwrap has read it, or never will
            return kernel
        except BaseException:
            if kernel is not None:
                with contextlib.suppress(Exception):
                    kernel.kill()
            shutil.rmtree(runtime, ignore_errors=True)
            if creds is not None:
                shutil.rmtree(creds, ignore_errors=True)
            raise

    def _launch(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        independent: bool,
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        # The engine reads these at start only; _attach removes them again.
        engine = {name: str(self.runtime / name.lower()) for name in _ENGINE_ENV}
        km = SpecManager(
            argv,
            transport="ipc",
            ip=str(self.runtime / "k"),
            connection_file=str(self.runtime / "connection.json"),
        )
        km.shutdown_wait_time = 2.0
        self._km = km
        self._session = km.session
        log = (self.runtime / "kernel.log").open("wb")
        try:
            km.start_kernel(
                env={**env, **engine},
                cwd=str(self.spawn.cwd) if self.spawn.cwd is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                # In a PID namespace the engine's parent check would see PID 1 and
                # exit at once; bwrap's --die-with-parent does that job there.
                independent=independent,
                pass_fds=pass_fds,
            )
        finally:
            log.close()
        provisioner = km.provisioner
        self.pid = int(getattr(provisioner, "pid", 0) or 0)
        self._shell = km.connect_shell()
        self._iopub = km.connect_iopub()
        self._iopub.setsockopt(zmq.SUBSCRIBE, b"")
        self._poller.register(self._shell, zmq.POLLIN)
        self._poller.register(self._iopub, zmq.POLLIN)
        self._wait_ready()

    def _wait_ready(self) -> None:
        # kernel_info until the shell answers AND iopub has carried a message:
        # the kernel binds its sockets after we connect (zmq reconnects every
        # 100 ms), and iopub drops what it publishes before our subscription
        # reaches it. Then one silent cell proves the tool channel attached.
        deadline = time.monotonic() + START_TIMEOUT
        km, shell, iopub = self._km, self._shell, self._iopub
        assert km is not None and shell is not None and iopub is not None
        live: set[zmq.Socket[bytes]] = set()
        while len(live) < 2:
            km.session.send(shell, "kernel_info_request", {})
            ask_again = time.monotonic() + 0.1
            while len(live) < 2 and (wait := ask_again - time.monotonic()) > 0:
                for sock, _ in self._poller.poll(int(wait * 1000) + 1):
                    with contextlib.suppress(zmq.Again):
                        while True:
                            sock.recv_multipart(zmq.NOBLOCK)
                    live.add(sock)
            if len(live) < 2 and (not self._running() or time.monotonic() > deadline):
                raise KernelError(f"the kernel did not start: {self._log_tail()}")
        check = "__import__('multiplex.kernel').kernel._Channel.key is not None"
        raw = self._execute("", deadline - time.monotonic(), None, silent=True, check=check)
        if raw.status != "ok" or raw.result != "True":
            raise KernelError(f"the kernel's tool channel did not attach: {self._log_tail()}")
        # The process that introduced itself on the channel is the kernel (its
        # requests alone are answered), never another process that found the socket.
        if self.channel.kernel_pid is None or self.channel.kernel_pid not in tree(self.pid):
            raise KernelError("the kernel's tool channel did not attach: not from the kernel")

    def _log_tail(self) -> str:
        try:
            text = (self.runtime / "kernel.log").read_text(errors="replace").strip()
        except OSError:
            return "no kernel log"
        return " ".join(text.splitlines()[-3:])[-300:] or "no output"

    # -- cells ------------------------------------------------------------------------
    def run_cell(self, code: str, token: str, timeout: float, cancel: threading.Event) -> RawCell:
        """Run ``code`` as one cell; past ``timeout`` or on ``cancel`` the kernel is killed."""
        return self._execute(code, timeout, cancel, token=token)

    def _execute(
        self,
        code: str,
        timeout: float,
        cancel: threading.Event | None,
        *,
        token: str | None = None,
        silent: bool = False,
        check: str | None = None,
    ) -> RawCell:
        km, shell, iopub = self._km, self._shell, self._iopub
        assert km is not None and shell is not None and iopub is not None
        content = {
            "code": code,
            "silent": silent,
            "store_history": not silent,
            "user_expressions": {"check": check} if check else {},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        metadata = {CELL_METADATA_KEY: token} if token else {}
        msg_id = km.session.send(shell, "execute_request", content, metadata=metadata)["header"][
            "msg_id"
        ]
        deadline = time.monotonic() + timeout
        out = Collector()
        raw = RawCell("ok")
        reply: dict[str, Any] | None = None
        # The reply says how many IOPub messages were queued before it (an engine
        # that does not say ends the cell with its idle status instead).
        queued: int | None = None
        seen, idle, heard = 0, False, time.monotonic()
        while reply is None or (seen < queued if queued is not None else not idle):
            if reply is not None and time.monotonic() - heard > _LATE:
                settled = self._settle_reply(reply, raw, out, check)
                settled.note = settled.note or "some of the cell's output did not arrive"
                return settled
            remaining = deadline - time.monotonic()
            if cancel is not None and cancel.is_set():
                return self._killed(raw, out, "cancelled")
            if remaining <= 0:
                return self._killed(raw, out, "timeout")
            events = dict(self._poller.poll(int(min(_SLICE, remaining) * 1000) + 1))
            if not events:
                if not self._running():
                    self.kill()
                    return finish(raw, out, "died", "the kernel process died")
                continue
            for kind, body, _ in self._read(iopub, msg_id):
                idle = on_iopub(kind, body, raw, out) or idle
                seen, heard = seen + 1, time.monotonic()
            for kind, body, meta in self._read(shell, msg_id):
                if kind == "execute_reply":
                    heard = time.monotonic()
                    reply, queued = body, meta.get(IOPUB_COUNT_KEY)
                    raw.result = meta.get(RESULT_KEY, raw.result)
        return self._settle_reply(reply, raw, out, check)

    def _read(
        self, sock: zmq.Socket[bytes], msg_id: str
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        session = self._session
        assert session is not None
        return read_answers(sock, session, msg_id)

    def _settle_reply(
        self, reply: dict[str, Any], raw: RawCell, out: Collector, check: str | None
    ) -> RawCell:
        raw.execution_count = reply.get("execution_count")
        if check:
            found = reply.get("user_expressions", {}).get("check", {})
            raw.result = found.get("data", {}).get("text/plain")
        if reply.get("status") == "error":
            raw.error = raw.error or {
                "ename": reply.get("ename", ""),
                "evalue": reply.get("evalue", ""),
                "traceback": reply.get("traceback", []),
            }
        exits = [p for p in reply.get("payload", []) if p.get("source") == "ask_exit"]
        if raw.error is not None and raw.error.get("ename") == "SystemExit":
            code = str(raw.error.get("evalue", ""))
            raw.error = None if code in ("", "0", "None") else raw.error
            self.shutdown()
            return finish(raw, out, "exited", f"the kernel ended: sys.exit({code})")
        if exits:
            self.shutdown()
            return finish(raw, out, "exited", "the kernel ended: exit()")
        return finish(raw, out, "error" if raw.error is not None else "ok", None)

    def _killed(self, raw: RawCell, out: Collector, status: str) -> RawCell:
        self.kill()
        return finish(raw, out, status, None)

    # -- state --------------------------------------------------------------------------
    @property
    def ended(self) -> bool:
        return self._ended

    def alive(self) -> bool:
        return not self._ended and self._running()

    def _running(self) -> bool:
        # The launched process itself (a non-blocking waitpid), not the manager's
        # async is_alive: that costs an event-loop turn per call.
        km = self._km
        process = getattr(km.provisioner, "process", None) if km is not None else None
        if process is None:
            return km is not None and bool(km.is_alive())
        return bool(process.poll() is None)

    def memory(self) -> int:
        """Resident memory of the kernel's whole process tree, in bytes."""
        return 0 if self._ended or not self.pid else memory_bytes(tree(self.pid))

    # -- ending ----------------------------------------------------------------------------
    def shutdown(self) -> list[int]:
        """End politely (a shutdown request), then kill whatever is left; see :meth:`kill`."""
        return self._end(polite=True)

    def kill(self) -> list[int]:
        """Kill the kernel's whole process tree and prove it dead; return the pids ended."""
        return self._end(polite=False)

    def _end(self, *, polite: bool) -> list[int]:
        with self._end_lock:
            if self._ended:
                return []
            self._ended = True
        pids = tree(self.pid) if self.pid else []
        km = self._km
        self.channel.close()  # the running cell's commands die with it
        if km is not None:
            with contextlib.suppress(Exception):
                km.shutdown_kernel(now=not polite)
        kill_and_prove(pids)
        for sock in (self._shell, self._iopub):
            if sock is not None:
                with contextlib.suppress(Exception):
                    self._poller.unregister(sock)
                sock.close(linger=0)
        shutil.rmtree(self.runtime, ignore_errors=True)
        if self.creds is not None:
            shutil.rmtree(self.creds, ignore_errors=True)
        if self.egress is not None:
            self.egress.close()
        return pids
