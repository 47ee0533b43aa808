"""One served profile home and the per-profile resources it owns (docs/configuration.md#profile-home, docs/multiplexing.md#the-model)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, TypeVar

from multiplex._errors import ProfileConfigError
from multiplex.profiles._child import child
from multiplex.profiles._credentials import CredentialFile, plan_credential_files, read_secret_file
from multiplex.profiles._dotenv import parse_dotenv
from multiplex.profiles._loader import missing_config_message, parse_config
from multiplex.profiles._paths import check_sandbox_paths
from multiplex.profiles._schema import ProfileSettings
from multiplex.profiles._settled import BeingWritten, read_settled
from multiplex.profiles._yamlread import holds_no_document
from multiplex.profiles.allowlist._allowlist import AllowlistStore, ReconcileResult
from multiplex.redaction import KnownValues, looks_secret_name

__all__ = ["MIN_TOKEN_LENGTH", "TOKEN_KEY", "Profile", "ProfileState", "ReloadResult"]

TOKEN_KEY = "MULTIPLEX_TOKEN"  # a profile's gateway token in its .env (docs/gateway.md)
MIN_TOKEN_LENGTH = 24

log = logging.getLogger("multiplex.profiles")
T = TypeVar("T")
_MAX_ENV_BYTES = 1024 * 1024
# A writer holding a config open this long is said once in the log (docs/configuration.md#validation).
_LONG_WRITE_S = 30.0


@dataclass(frozen=True, slots=True)
class ProfileState:
    """One config epoch of a profile: everything read from its files, validated."""

    settings: ProfileSettings
    dotenv: Mapping[str, str]
    credentials: tuple[CredentialFile, ...]
    known_secrets: KnownValues
    secrets_digest: str
    epoch: int
    digest: str
    warnings: tuple[str, ...]
    loaded_at: float


@dataclass(frozen=True, slots=True)
class ReloadResult:
    """What one reload did: ``unchanged``, ``ok`` (new epoch), ``error`` (kept the last good)
    or ``waiting`` (a file was being written: read again once it is whole, nothing changed)."""

    result: Literal["unchanged", "ok", "error", "waiting"]
    epoch: int
    error: str | None = None
    allowlist: ReconcileResult | None = None
    mtime: float | None = None
    # The last good bytes restored after a broken edit: the same config, but no error now.
    recovered: bool = False

    @property
    def news(self) -> bool:
        """Whether the reload changed anything, failed or ended a failure (worth a log
        line, a signal and an event)."""
        return self.result in ("ok", "error") or self.recovered


@dataclass(slots=True)
class _Files:
    config: bytes
    env: bytes
    mtime: float
    credentials: bytes = b""  # the current credential files' contents, for the digest only
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        self.digest = hashlib.sha256(
            self.config + b"\0" + self.env + b"\0" + self.credentials
        ).hexdigest()


class Profile:
    """A profile home served by this process.

    It owns every per-profile resource (allowlist store, caches, session state,
    pending approvals, ...) — nothing per-profile lives in process globals. A
    broken config never raises out of :meth:`reload`: the profile keeps its last
    good state (or has none, and is not routable) and reports the error.
    """

    def __init__(
        self, name: str, home: Path, *, config_path: Path | None = None, resolved: bool = False
    ) -> None:
        # ``config_path``: another file read as this home's config.yaml (a proposed
        # policy replayed against the home's history, docs/allowlist.md#policy-diff).
        # ``resolved``: the caller found ``home`` resolved already (SupervisorConfig.found_homes).
        self.name = name
        self.home = home if resolved else home.resolve()
        self.config_path = config_path.resolve() if config_path else child(self.home, "config.yaml")
        self.env_path = child(self.home, ".env")
        self._state: ProfileState | None = None
        self._store: AllowlistStore | None = None
        self._error: str | None = None
        self._error_since: float | None = None  # when the current error began
        self._digest: str | None = None
        self._defaults = False  # its last good config.yaml held no document (every default)
        self._store_writes = 0
        self._last_reload: float | None = None
        self._lock = threading.RLock()
        self._resources: dict[str, object] = {}
        # get_resource(key): the resource under ``key`` if it was created, else None
        # (never creates). The dict's own get: every turn's surfaces call it.
        self.get_resource: Callable[[str], object | None] = self._resources.get
        self._listeners: list[Callable[[Profile, ReloadResult], None]] = []
        self._waiting_since: float | None = None  # when its files were first found being written
        self._waiting_warned = False

    # -- state ---------------------------------------------------------------
    @property
    def status(self) -> Literal["ok", "error"]:
        return "error" if self._error is not None else "ok"

    @property
    def error(self) -> str | None:
        """The last load or reload error (one line), or None."""
        return self._error

    @property
    def last_good_since(self) -> float | None:
        """When its file broke, while it still serves its last good config; else None.

        docs/configuration.md#validation: a broken edit of a loaded profile keeps
        the last good settings serving (and routable) until the file is fixed.
        """
        if self._error is None or self._state is None:
            return None
        return self._error_since

    @property
    def loaded(self) -> bool:
        """Whether a valid config was ever loaded (only then is it routable)."""
        return self._state is not None

    @property
    def state(self) -> ProfileState:
        state = self._state
        if state is None:
            raise ProfileConfigError(self._error or "not loaded", file=self.config_path)
        return state

    @property
    def epoch(self) -> int:
        return self._state.epoch if self._state is not None else 0

    @property
    def last_reload(self) -> float | None:
        return self._last_reload

    @property
    def allowlist(self) -> AllowlistStore:
        store = self._store
        if store is None:
            raise ProfileConfigError(self._error or "not loaded", file=self.config_path)
        return store

    def resource(self, key: str, factory: Callable[[Profile], T]) -> T:
        """The profile's own instance of a per-profile resource, created once."""
        try:
            return self._resources[key]  # type: ignore[return-value]
        except KeyError:
            with self._lock:
                if key not in self._resources:
                    self._resources[key] = factory(self)
                return self._resources[key]  # type: ignore[return-value]

    @property
    def resource_keys(self) -> tuple[str, ...]:
        return tuple(self._resources)

    def resources(self, prefix: str = "") -> dict[str, object]:
        """The per-profile resources whose key starts with ``prefix``."""
        return {k: v for k, v in list(self._resources.items()) if k.startswith(prefix)}

    def on_reload(self, listener: Callable[[Profile, ReloadResult], None]) -> None:
        self._listeners.append(listener)

    # -- loading -------------------------------------------------------------
    def reload(self) -> ReloadResult:
        """Re-read config.yaml and .env; a valid change makes a new epoch."""
        store = self._store
        # Our own allowlist writes wait while we read and reconcile (see writes_paused).
        with self._lock, store.writes_paused() if store is not None else contextlib.nullcontext():
            result = self._reload_locked()
        for listener in self._listeners:
            listener(self, result)
        return result

    def _reload_locked(self) -> ReloadResult:
        self._last_reload = time.time()
        try:
            try:
                files = self._read_files()
            except BeingWritten as exc:
                # docs/configuration.md#validation: never read half written; the watcher
                # reads it again once its writer is done.
                self._still_written(exc)
                return ReloadResult("waiting", self.epoch)
            self._waiting_since, self._waiting_warned = None, False
            writes = self._store.writes if self._store is not None else 0
            if (
                files.digest == self._digest
                and writes == self._store_writes
                and self._state is not None
            ):
                # A touch or a re-save. (After our own write the digest we hold is
                # stale: an edit back to those exact bytes must still reconcile.)
                recovered = self._error is not None
                if recovered:
                    # The last good bytes restored after a broken edit: ok again.
                    self._error, self._error_since = None, None
                    log.warning("profile %s: back to its last good config", self.name)
                return ReloadResult("unchanged", self.epoch, recovered=recovered)
            self._store_writes = writes
            if self._state is not None and not self._defaults and holds_no_document(files.config):
                # docs/configuration.md#validation: a save caught between its truncation and
                # its write would turn a strict profile into the defaults: never on a reload.
                raise ProfileConfigError(
                    "is empty (a save still being written?); the running profile keeps its last"
                    " good config; write {} for every default",
                    file=self.config_path,
                )
            new = self._build_state(files)
        except ProfileConfigError as exc:
            self._error_since = self._error_since or time.time()
            self._error = str(exc)
            log.warning("profile %s: %s", self.name, exc)
            return ReloadResult("error", self.epoch, error=str(exc))
        except Exception as exc:  # fail closed: one profile never takes the supervisor down
            log.exception("profile %s: unexpected error while loading", self.name)
            self._error_since = self._error_since or time.time()
            self._error = f"{self.config_path}: cannot be loaded ({type(exc).__name__})"
            return ReloadResult("error", self.epoch, error=self._error)
        self._digest = files.digest
        self._defaults = holds_no_document(files.config)  # its last good file: no document
        self._error, self._error_since = None, None
        old = self._state
        if self._store is None:
            self._store = AllowlistStore(self.config_path, initial=new.settings.command_allowlist)
            reconciled = None
        else:
            reconciled = self._store.reconcile(new.settings.command_allowlist)
        if (
            old is not None
            and _same_effect(old, new)
            and not (reconciled and (reconciled.added or reconciled.removed))
        ):
            # Our own allowlist write (or a no-op edit): same settings, same epoch.
            self._state = _with_epoch(new, old.epoch)
            return ReloadResult("unchanged", old.epoch, allowlist=reconciled, mtime=files.mtime)
        self._state = _with_epoch(new, (old.epoch if old else 0) + 1)
        for warning in new.warnings:
            log.warning("%s", warning)
        return ReloadResult("ok", self._state.epoch, allowlist=reconciled, mtime=files.mtime)

    def _still_written(self, exc: BeingWritten) -> None:
        """Say, once, that a writer has held its file open for long: the running config
        stays until it closes it (a never-loaded home says so as its error)."""
        now = time.time()
        since = self._waiting_since = self._waiting_since or now
        if self._state is None:  # never loaded: not routable, and says why
            self._error = f"{exc.filename}: {exc.strerror}"
        long = now - since >= _LONG_WRITE_S
        (log.warning if long and not self._waiting_warned else log.debug)(
            "profile %s: %s: %s for %.0f s; the running config stays",
            self.name, exc.filename, exc.strerror, now - since,
        )  # fmt: skip
        self._waiting_warned = long

    def _read_files(self) -> _Files:
        try:
            config, mtime = read_settled(self.config_path)
        except FileNotFoundError:
            # docs/configuration.md#validation: moved away or a dangling link is an error, never defaults.
            raise ProfileConfigError(
                missing_config_message(self.config_path), file=self.config_path
            ) from None
        except BeingWritten:
            raise
        except OSError as exc:
            raise ProfileConfigError(
                f"cannot read: {exc.strerror}", file=self.config_path
            ) from None
        try:
            env, _ = read_settled(self.env_path)
        except FileNotFoundError:
            env = b""
        except BeingWritten:
            raise
        except OSError as exc:
            raise ProfileConfigError(f"cannot read: {exc.strerror}", file=self.env_path) from None
        if len(env) > _MAX_ENV_BYTES:
            raise ProfileConfigError("file is larger than 1 MiB; refused", file=self.env_path)
        # A rotated credential file changes the digest: its new value is masked at once.
        state = self._state
        creds = b""
        if state is not None:
            creds = b"\0".join(
                hashlib.sha256(read_secret_file(self.home, rel).encode()).digest()
                for rel in state.settings.terminal.credential_files
            )
        return _Files(config, env, mtime, creds)

    def _build_state(self, files: _Files) -> ProfileState:
        loaded = parse_config(files.config, file=self.config_path)
        try:
            env_text = files.env.decode("utf-8")
        except UnicodeDecodeError:
            raise ProfileConfigError("not valid UTF-8", file=self.env_path) from None
        dotenv = parse_dotenv(env_text, file=self.env_path)
        _check_token(dotenv, env_text, self.env_path)
        creds, cred_warnings = plan_credential_files(
            self.home, loaded.settings.terminal.credential_files, config=self.config_path
        )
        path_warnings = check_sandbox_paths(
            self.home, loaded.settings.terminal, config=self.config_path
        )
        secrets = [v for k, v in dotenv.items() if looks_secret_name(k)]
        for cred in creds:
            secrets.extend(_secret_parts(read_secret_file(self.home, cred.relative)))
        return ProfileState(
            settings=loaded.settings,
            dotenv=MappingProxyType(dict(dotenv)),
            credentials=creds,
            known_secrets=KnownValues(secrets),
            secrets_digest=hashlib.sha256("\0".join(sorted(secrets)).encode()).hexdigest(),
            epoch=1 if self._state is None else 0,  # the first load's; a reload's is set after
            digest=files.digest,
            warnings=loaded.warnings + cred_warnings + path_warnings,
            loaded_at=time.time(),
        )

    def __repr__(self) -> str:
        return f"Profile({self.name!r}, home={str(self.home)!r}, status={self.status!r})"


def _check_token(dotenv: Mapping[str, str], text: str, path: Path) -> None:
    # docs/security.md#tokens-and-ids: a short gateway token is guessable; refuse it.
    token = dotenv.get(TOKEN_KEY, "").strip()
    if token and len(token) < MIN_TOKEN_LENGTH:
        line = next(
            (
                i
                for i, raw in enumerate(text.splitlines(), 1)
                if re.match(rf"\s*(export\s+)?{TOKEN_KEY}\s*=", raw)
            ),
            None,
        )
        raise ProfileConfigError(
            f"shorter than {MIN_TOKEN_LENGTH} characters; refused "
            "(`multiplex profiles init` or `make run` generate one)",
            file=path,
            key=TOKEN_KEY,
            line=line,
        )


def _secret_parts(content: str) -> list[str]:
    # The whole file, and each long token-like line (keys, PEM bodies, JSON values
    # would otherwise leak line by line).
    parts = [content.strip()]
    parts.extend(
        line.strip()
        for line in content.splitlines()
        if len(line.strip()) >= 20 and " " not in line.strip()
    )
    return [p for p in parts if p]


def _same_effect(old: ProfileState, new: ProfileState) -> bool:
    strip = {"command_allowlist": ()}
    return (
        old.settings.model_copy(update=strip) == new.settings.model_copy(update=strip)
        and dict(old.dotenv) == dict(new.dotenv)
        and old.credentials == new.credentials
        and old.secrets_digest == new.secrets_digest
    )


def _with_epoch(state: ProfileState, epoch: int) -> ProfileState:
    # A first load builds its state at epoch 1 already: nothing to copy.
    return state if state.epoch == epoch else dataclasses.replace(state, epoch=epoch)
