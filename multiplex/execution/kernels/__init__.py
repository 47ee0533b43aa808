"""Session-persistent Python kernels, one per (profile, session, delegation chain).

``_pool`` owns every kernel of a supervisor (caps, eviction, reaping,
disposal); ``_slots`` says who owns which; ``_process`` drives one ipykernel
with jupyter-client; ``_channel`` serves the in-kernel helper's shell requests
under the running cell's authority; ``_spawn`` freezes the profile's scope for
a kernel; ``_cells`` holds the result and the ``cells.jsonl`` record. See
docs/kernels.md.
"""

from multiplex.execution.kernels import _surfaces  # noqa: F401  (registers the kernels surface)
from multiplex.execution.kernels._cells import CellError, CellResult, KernelError
from multiplex.execution.kernels._channel import CellAuthority
from multiplex.execution.kernels._pool import KernelPool
from multiplex.execution.kernels._slots import KERNELS_KEY, KernelKey, key_of

__all__ = [
    "KERNELS_KEY",
    "CellAuthority",
    "CellError",
    "CellResult",
    "KernelError",
    "KernelKey",
    "KernelPool",
    "key_of",
]
