"""The kernel process: ipykernel, trimmed for one client that waits for every cell (docs/kernels.md#speed).

This file runs INSIDE a session kernel. The supervisor starts it by path
(``python -c``, see ``_spawn.kernel_argv``) under a private module name,
never as ``multiplex.execution.kernels._engine``: importing the multiplex package would
cost every kernel about half a second at start. For the same reason the
in-kernel helper ``multiplex/kernel.py`` (standard library only) is loaded by
path as ``multiplex.kernel`` under a ``multiplex`` package whose ``__init__``
runs only when a cell first asks for one of its names.

What differs from a stock ipykernel, and why it keeps every rule of
docs/kernels.md:

- One shell thread. ipykernel 7 receives shell messages on a thread of their
  own (for subshells) and hands each to the main thread and each reply back
  over inproc sockets; the supervisor never uses subshells, so the main thread
  serves the shell socket itself.
- No sleep after a cell (``_execute_sleep``, 0.5 ms a cell in ipykernel) and a
  flush that does not wait for the IOPub thread (six round trips a cell in
  ipykernel): it queues the buffered output's messages for that thread itself
  before the cell's reply is made, and the reply counts them (below), so
  nothing is lost or reordered by not waiting.
- No ``execute_input`` echo and no ``busy`` status: the supervisor, the only
  client, reads neither.
- A cell's reply carries its result (the repr of its last expression) and the
  number of IOPub messages queued for the cell before the reply (its output,
  errors, displays), instead of an ``execute_result`` and an ``idle`` status on
  IOPub: the supervisor settles the cell once it holds the reply and that many
  messages, so a cell without output costs no IOPub message and no wake-up of
  the IOPub thread.
- A cell of plain Python (it parses as it is, and no IPython syntax or
  single-line rewriting applies to it, see :func:`plain_python`) skips IPython's
  input transformation (run three times a cell: twice ``transform_cell``, once
  more ``should_run_async``); it runs through the same ``run_cell`` otherwise,
  so results, errors, history and ``sys.exit()`` are IPython's own.
- ipykernel's check of ``run_cell_async``'s signature (``inspect.signature``
  on every cell) is answered once per function.
- Before a flush hands the buffer over, output a subprocess of the cell wrote to
  the kernel's file descriptors and that still sits in the pipe is read into it
  (bounded by ``_stream.DRAIN_WAIT``), so it is attributed to the cell that ran it.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from pathlib import Path
from typing import Any

import zmq
from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp
from jupyter_client.session import extract_header
from traitlets import Float

__all__ = ["CellKernel", "CellKernelApp", "main"]

_PACKAGE = Path(__file__).resolve().parents[2]  # .../multiplex


def _beside(name: str) -> types.ModuleType:
    """The module ``name``.py beside this file, loaded by path under a private name."""
    spec = importlib.util.spec_from_file_location(
        f"_multiplex_kernel{name}", Path(__file__).with_name(f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


plain_python = _beside("_plain").plain_python
_STREAM = _beside("_stream")  # CellStream, the kernel's stdout and stderr


class _NoShellThread:
    """Stands for ipykernel 7's shell channel thread: absent (falsy), on the main thread."""

    parent_thread = threading.main_thread()

    def __bool__(self) -> bool:
        return False


class CellKernel(IPythonKernel):
    """An IPython kernel without subshells, the per-cell sleep, and messages nobody reads."""

    _execute_sleep = Float(0.0).tag(config=True)

    @property
    def _supports_kernel_subshells(self) -> bool:
        return False

    # The supervisor is the kernel's only client: it sent the code and waits for
    # the reply and the idle status, so the echo of the code and the busy status
    # would only cost both processes a message (and the IOPub thread a wake-up).
    def _publish_execute_input(self, code: str, parent: Any, execution_count: int) -> None:
        return

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        if status == "busy":
            return
        head = extract_header(parent or self.get_parent(channel))  # type: ignore[no-untyped-call]
        if status == "idle" and head.get("msg_type") == "execute_request":
            return  # the reply says when the cell's output is complete
        super()._publish_status(status, channel, parent)  # type: ignore[no-untyped-call]

    async def execute_request(self, stream: Any, ident: Any, parent: Any) -> None:
        TALLY.begin(parent["header"]["msg_id"])
        try:
            await super().execute_request(stream, ident, parent)  # type: ignore[no-untyped-call]
        finally:
            TALLY.end()

    def finish_metadata(self, parent: Any, metadata: Any, reply_content: Any) -> Any:
        # Called after the cell's stdout and stderr were flushed, just before the reply.
        metadata = super().finish_metadata(parent, metadata, reply_content)  # type: ignore[no-untyped-call]
        queued, result = TALLY.end()
        metadata[_helper().IOPUB_COUNT_KEY] = queued
        if result is not None:
            metadata[_helper().RESULT_KEY] = result
        return metadata

    async def do_execute(
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
        **cell: Any,
    ) -> dict[str, Any]:
        shell: Any = self.shell
        plain = not silent and not user_expressions and plain_python(shell, code)
        if plain:
            # What transform_cell would return for this cell (it adds the
            # newline), and IPython's answer for a cell without top-level await;
            # a cell that runs another (get_ipython().run_cell) gets IPython's own.
            stock = type(shell)
            cell_text = code if code.endswith("\n") else code + "\n"

            def transform_cell(raw: str) -> str:
                return cell_text if raw == code else str(stock.transform_cell(shell, raw))

            def should_run_async(raw: str, **kwargs: Any) -> bool:
                return raw != code and bool(stock.should_run_async(shell, raw, **kwargs))

            shell.transform_cell = transform_cell
            shell.should_run_async = should_run_async
        try:
            return await super().do_execute(  # type: ignore[no-any-return,no-untyped-call]
                code, silent, store_history, user_expressions, allow_stdin, **cell
            )
        finally:
            if plain:
                del shell.transform_cell, shell.should_run_async


class _Tally:
    """The IOPub messages queued for the cell that runs, and its result."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cell: str | None = None
        self._queued = 0
        self._result: str | None = None

    def begin(self, msg_id: str) -> None:
        with self._lock:
            self._cell, self._queued, self._result = msg_id, 0, None

    def sent(self, parent_id: object, msg_type: str) -> None:
        with self._lock:
            if parent_id == self._cell and msg_type != "execute_reply":
                self._queued += 1

    def result(self, text: str | None) -> None:
        with self._lock:
            if self._cell is not None:
                self._result = text

    def end(self) -> tuple[int, str | None]:
        """The count and the result; later messages are not counted (the cell settled)."""
        with self._lock:
            done, self._cell = (self._queued, self._result), None
            return done


TALLY = _Tally()


def _count_sends(session: Any) -> None:
    # Every message the kernel sends goes through its one Session (the streams,
    # the display hook and publisher, the kernel's own); the tally counts those
    # whose parent is the running cell, from whichever thread queues them.
    send = session.send

    def counted(stream: Any, msg_or_type: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(msg_or_type, dict):
            head, msg_type = msg_or_type.get("parent_header") or {}, msg_or_type.get("msg_type", "")
        else:
            parent = kwargs.get("parent", args[1] if len(args) > 1 else None)
            head, msg_type = extract_header(parent or {}), msg_or_type
        TALLY.sent(head.get("msg_id"), msg_type)
        return send(stream, msg_or_type, *args, **kwargs)

    session.send = counted


def _keep_results_off_iopub(hook: Any) -> None:
    # The last expression's text/plain goes into the cell's reply (finish_metadata),
    # not out as an execute_result: what ZMQShellDisplayHook.finish_displayhook
    # does apart from sending, for the supervisor that reads text/plain only.
    def finish_displayhook() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        data = (hook.msg or {}).get("content", {}).get("data") or {}
        if data:
            TALLY.result(data.get("text/plain"))
        hook.msg = None

    hook.finish_displayhook = finish_displayhook


class CellKernelApp(IPKernelApp):
    """ipykernel's application with :class:`CellKernel`, ``CellStream`` and the helper attached."""

    runtime = ""

    def init_iopub(self, context: Any) -> None:
        # ZeroMQ's PUB socket drops what its queue (1000 messages by default)
        # cannot hold: a cell flushing thousands of times while the supervisor is
        # slow to read lost output. Unbounded here, the queue lives in the kernel's
        # own memory (under its limit) and the supervisor's socket pushes back
        # over the connection instead of anything being dropped.
        context.setsockopt(zmq.SNDHWM, 0)
        try:
            super().init_iopub(context)  # type: ignore[no-untyped-call]
        finally:
            context.sockopts.pop(zmq.SNDHWM, None)

    def init_control(self, context: Any) -> None:
        super().init_control(context)  # type: ignore[no-untyped-call]
        if getattr(self, "shell_channel_thread", None) is not None:
            self.shell_channel_thread = _NoShellThread()

    def init_kernel(self) -> None:
        super().init_kernel()  # type: ignore[no-untyped-call]
        # traitlets leaves the logger at DEBUG and filters in the handler: every
        # message the kernel handles would build several records nobody sees.
        self.log.setLevel(self.log_level)
        _count_sends(self.kernel.session)
        _keep_results_off_iopub(self.kernel.shell.displayhook)

    def init_code(self) -> None:
        # Where ipykernel runs exec_lines: after the engine set its variables
        # (TERM, PAGER, ...), which _attach takes out of os.environ again.
        _helper()._attach(self.runtime)
        super().init_code()  # type: ignore[no-untyped-call]


def _helper() -> types.ModuleType:
    """``multiplex.kernel``, the in-kernel helper (loaded on first use)."""
    return sys.modules.get("multiplex.kernel") or _load_helper()


def _load_helper() -> types.ModuleType:
    """``multiplex.kernel`` from its file, under a package that loads the rest on first use."""
    if "multiplex" not in sys.modules:
        sys.modules["multiplex"] = _lazy_package()
    spec = importlib.util.spec_from_file_location("multiplex.kernel", _PACKAGE / "kernel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["multiplex.kernel"] = module
    spec.loader.exec_module(module)
    setattr(sys.modules["multiplex"], "kernel", module)  # noqa: B010  (what import sets)
    return module


def _lazy_package() -> types.ModuleType:
    init = _PACKAGE / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "multiplex", init, submodule_search_locations=[str(_PACKAGE)]
    )
    assert spec is not None
    package = importlib.util.module_from_spec(spec)
    loaded = False

    def __getattr__(name: str) -> Any:  # PEP 562: a cell asked for a package name
        nonlocal loaded
        if not loaded:
            loaded = True
            code = compile(init.read_bytes(), str(init), "exec")
            exec(code, package.__dict__)
        try:
            return package.__dict__[name]
        except KeyError:
            raise AttributeError(f"module 'multiplex' has no attribute {name!r}") from None

    package.__getattr__ = __getattr__  # type: ignore[method-assign]
    return package


def _keep_dates_as_text() -> None:
    # jupyter-client parses every ISO date of every header it receives (an eighth
    # of a warm cell's time in the kernel); nothing in the kernel reads them.
    from jupyter_client import session

    setattr(session, "extract_dates", lambda obj: obj)  # noqa: B010


def _remember_signatures() -> None:
    # ipykernel asks inspect.signature of run_cell_async on every cell; its
    # answer only changes with the function, so it is computed once per function.
    from ipykernel import ipkernel

    ask: Any = getattr(ipkernel, "_accepts_parameters")  # noqa: B009  (private, not exported)
    known: dict[tuple[Any, tuple[str, ...]], dict[str, bool]] = {}

    def accepts_parameters(meth: Any, param_names: list[str]) -> dict[str, bool]:
        key = (getattr(meth, "__func__", meth), tuple(param_names))
        found = known.get(key)
        if found is None:
            found = known[key] = ask(meth, param_names)
        return dict(found)

    setattr(ipkernel, "_accepts_parameters", accepts_parameters)  # noqa: B010


def main() -> None:
    """``<runtime> -f <connection file> [ipykernel options]``: run the kernel."""
    _remember_signatures()
    _keep_dates_as_text()
    runtime = sys.argv.pop(1)
    CellKernelApp.runtime = runtime
    CellKernelApp.launch_instance(
        kernel_class=CellKernel, outstream_class=f"{_STREAM.__name__}.CellStream"
    )
