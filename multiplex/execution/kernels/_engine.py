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
  ipykernel): it queues the buffered output's messages for that thread itself,
  ahead of the cell's ``idle`` status, and the supervisor waits for that status,
  so nothing is lost or reordered by not waiting.
- No ``execute_input`` echo and no ``busy`` status: the supervisor, the only
  client, reads neither.
- A cell of plain Python (it parses as it is, and no IPython syntax or
  single-line rewriting applies to it, see :func:`plain_python`) skips IPython's
  input transformation (run three times a cell: twice ``transform_cell``, once
  more ``should_run_async``); it runs through the same ``run_cell`` otherwise,
  so results, errors, history and ``sys.exit()`` are IPython's own.
- ipykernel's check of ``run_cell_async``'s signature (``inspect.signature``
  on every cell) is answered once per function.
- Before a flush hands the buffer over, output a subprocess of the cell wrote to
  the kernel's file descriptors and that still sits in the pipe is read into it
  (bounded by :data:`DRAIN_WAIT`), so it is attributed to the cell that ran it.
"""

from __future__ import annotations

import array
import ast
import codecs
import fcntl
import importlib.util
import os
import re
import select
import sys
import termios
import threading
import time
import types
from pathlib import Path
from typing import Any

from ipykernel.iostream import OutStream
from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp
from IPython.core.autocall import IPyAutocall
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.macro import Macro
from IPython.core.prefilter import _default_checkers
from IPython.core.splitinput import LineInfo
from traitlets import Float

__all__ = ["CellKernel", "CellKernelApp", "CellStream", "main", "plain_python"]

# Longest a flush waits for the fd watcher to take what is already in the pipe:
# a subprocess left writing without pause cannot hold a cell open.
DRAIN_WAIT = 0.05
_PACKAGE = Path(__file__).resolve().parents[2]  # .../multiplex
_CHUNK = 65536


class CellStream(OutStream):
    """The kernel's stdout/stderr: a flush that never waits for the IOPub thread."""

    _relaying = False  # the fd watcher holds bytes it read and has not buffered yet

    def _watch_pipe_fd(self) -> None:
        # ipykernel's watcher, with a mark set BEFORE bytes leave the pipe and
        # cleared once they are in the buffer: a flush sees them either way.
        fid = self._fid
        if fid is None:
            return
        poller = select.poll()
        poller.register(fid, select.POLLIN)
        # A character split across two reads of what is already in the pipe is
        # decoded whole; an unfinished one when the pipe is empty is replaced.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while self._should_watch:
                poller.poll()
                self._relaying = True
                data = os.read(fid, _CHUNK)
                if not data or not self._should_watch:
                    break  # closed (close() wakes the watcher with one byte)
                text = decoder.decode(data, final=self._unread(fid) == 0)
                if text:
                    self.write(text)
                os.write(self._original_stdstream_copy, data)
                self._relaying = False
        except Exception:
            self._exc = sys.exc_info()
        finally:
            self._relaying = False

    def _pipe_pending(self) -> bool:
        fid = self._fid
        if fid is None or not self._should_watch:
            return False
        return self._relaying or self._unread(fid) > 0

    @staticmethod
    def _unread(fid: int) -> int:
        size = array.array("i", [0])
        try:
            fcntl.ioctl(fid, termios.FIONREAD, size)
        except OSError:
            return 0
        return size[0]

    def flush(self) -> None:
        pub = self.pub_thread
        thread = pub.thread if pub is not None else None
        if thread is None or not thread.is_alive() or thread.ident == threading.get_ident():
            super().flush()  # type: ignore[no-untyped-call]
            return
        if self._pipe_pending():
            deadline = time.monotonic() + DRAIN_WAIT
            while self._pipe_pending() and time.monotonic() < deadline:
                time.sleep(0.0002)
        with self._buffer_lock:
            pending = bool(self._buffers)
        if pending:
            # The stream messages are queued for the IOPub thread here, so they
            # go out ahead of the cell's idle status, queued after them.
            self._flush()

    def _flush(self) -> None:
        # Taking the buffer and queueing its message happen in one step, so two
        # flushes (this thread's, the IOPub thread's timer) keep the output in order.
        with self._buffer_lock:
            super()._flush()  # type: ignore[no-untyped-call]


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
        if status != "busy":
            super()._publish_status(status, channel, parent)  # type: ignore[no-untyped-call]

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


# The input transformers and prefilter checkers IPython sets up; a cell or an
# extension that adds one makes every cell go through transform_cell again.
_STOCK_INPUT = TransformerManager()  # type: ignore[no-untyped-call]
_STOCK_COUNTS = (
    len(_STOCK_INPUT.cleanup_transforms),
    len(_STOCK_INPUT.line_transforms),
    len(_STOCK_INPUT.token_transformers),
    len(_default_checkers),
)


# Line breaks to str.splitlines (which IPython's transformers use) but not to
# Python's tokenizer: a "line" after one could be taken for a magic.
_ODD_BREAK = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def plain_python(shell: Any, code: str) -> bool:
    """True when IPython's input transformation would leave ``code`` as it is.

    Conservative: anything IPython could rewrite (a prompt, leading blank lines
    or indentation, a line of only blanks, a form feed or another break only
    ``str.splitlines`` sees, magics and shell escapes, which do not parse as Python, a
    single line naming a magic, a macro or an autocall object such as ``exit``,
    autocall mode, a transformer or prefilter checker someone added) or that may
    need the event loop (``await``, ``async``) answers False, and the cell takes
    IPython's path.
    """
    manager = shell.input_transformer_manager
    counts = (
        len(manager.cleanup_transforms),
        len(manager.line_transforms),
        len(manager.token_transformers),
        len(shell.prefilter_manager.checkers),
    )
    if counts != _STOCK_COUNTS or shell.input_transformers_post:
        return False
    if "await" in code or "async" in code or _ODD_BREAK.search(code):
        return False
    lines = code.splitlines()
    if not lines or not lines[0].strip() or lines[0][0].isspace():
        return False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith((">>>", "...", "In [")) or (line and not stripped):
            return False  # a prompt; a line of blanks (IPython empties it)
    try:
        ast.parse(code)
    except Exception:  # IPython reports it, or its transformers make it Python
        return False
    if len(lines) == 1:
        return _plain_line(shell, lines[0])
    return True


def _plain_line(shell: Any, line: str) -> bool:
    # IPython's prefilter checkers for a single line (IPython.core.prefilter).
    prefilter = shell.prefilter_manager
    if shell.autocall or prefilter.transformers or line.endswith("# PYTHON-MODE"):
        return False
    name = LineInfo(line).ifun
    if not name:
        return True
    obj = shell.user_ns.get(name)
    if isinstance(obj, (Macro, IPyAutocall)):
        return False
    return not (shell.automagic and shell.find_magic(name))


class CellKernelApp(IPKernelApp):
    """ipykernel's application with :class:`CellKernel`, :class:`CellStream` and the helper attached."""

    runtime = ""

    def init_control(self, context: Any) -> None:
        super().init_control(context)  # type: ignore[no-untyped-call]
        if getattr(self, "shell_channel_thread", None) is not None:
            self.shell_channel_thread = _NoShellThread()

    def init_kernel(self) -> None:
        super().init_kernel()  # type: ignore[no-untyped-call]
        # traitlets leaves the logger at DEBUG and filters in the handler: every
        # message the kernel handles would build several records nobody sees.
        self.log.setLevel(self.log_level)

    def init_code(self) -> None:
        # Where ipykernel runs exec_lines: after the engine set its variables
        # (TERM, PAGER, ...), which _attach takes out of os.environ again.
        _load_helper()._attach(self.runtime)
        super().init_code()  # type: ignore[no-untyped-call]


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
    runtime = sys.argv.pop(1)
    CellKernelApp.runtime = runtime
    CellKernelApp.launch_instance(kernel_class=CellKernel, outstream_class=f"{__name__}.CellStream")
