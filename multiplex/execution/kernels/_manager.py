"""The jupyter-client manager that starts one kernel from its frozen spawn (docs/kernels.md#environment).

Loaded with a profile's first kernel only (through ``_process``): CLI commands and
hooks never import jupyter-client (docs/operations.md#starting-fast).
"""

from __future__ import annotations

from typing import Any

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import KernelManager

__all__ = ["SpecManager"]


class SpecManager(KernelManager):
    """jupyter-client's KernelManager with our kernel spec (no kernelspec lookup on disk)."""

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._spec = KernelSpec(argv=argv, display_name="multiplex", language="python", env={})

    @property
    def kernel_spec(self) -> KernelSpec | None:
        return self._spec
