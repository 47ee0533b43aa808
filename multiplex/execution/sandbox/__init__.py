"""The bubblewrap sandbox of a profile's processes (docs/execution.md#the-sandbox).

``_sandbox`` builds the ``bwrap`` argv and stops a sandbox; ``_sandbox_binds`` and
``_view_cache`` say what a profile's view shows, hides and lets it write;
``_root_view`` the system's runtime and ``/etc`` on the empty root, ``_etc_mirror``
the copy of ``/etc`` a sandbox binds (brought in step by ``_etc_sync``; its folder, like
an unsandboxed run's credential folder, on the tmpfs of ``_tmpfs``); ``_seccomp`` the syscall floor. The
package's names are re-exported by ``multiplex.execution``.
"""
