"""Profile homes: config schema, loading, the allowlist store, YAML round trip (docs/configuration.md#profile-home, docs/allowlist.md)."""

from multiplex.profiles._credentials import CredentialFile, plan_credential_files, read_credential
from multiplex.profiles._dotenv import parse_dotenv, read_dotenv
from multiplex.profiles._loader import LoadedConfig, load_config, parse_config, read_allowlist
from multiplex.profiles._nofollow import (
    LinkRefused,
    append_bytes,
    open_dir,
    replace_file,
    write_new,
)
from multiplex.profiles._profile import (
    MIN_TOKEN_LENGTH,
    TOKEN_KEY,
    Profile,
    ProfileState,
    ReloadResult,
)
from multiplex.profiles._schema import (
    ApprovalSettings,
    CodeExecutionSettings,
    ProfileSettings,
    SecuritySettings,
    TerminalSettings,
)
from multiplex.profiles._yamlread import holds_no_document
from multiplex.profiles.allowlist._allowlist import AllowlistStore, InvalidRule, ReconcileResult
from multiplex.profiles.allowlist._bindings import binding_digest, binding_problem
from multiplex.profiles.allowlist._grant_endings import GrantEnded, GrantEndings
from multiplex.profiles.allowlist._granted_rules import GrantedRules, grant_state
from multiplex.profiles.allowlist._grants import GrantText, entry_rule, parse_expiry

__all__ = [
    "MIN_TOKEN_LENGTH",
    "TOKEN_KEY",
    "AllowlistStore",
    "ApprovalSettings",
    "CodeExecutionSettings",
    "CredentialFile",
    "GrantEnded",
    "GrantEndings",
    "GrantText",
    "GrantedRules",
    "InvalidRule",
    "LinkRefused",
    "LoadedConfig",
    "Profile",
    "ProfileSettings",
    "ProfileState",
    "ReconcileResult",
    "ReloadResult",
    "SecuritySettings",
    "TerminalSettings",
    "append_bytes",
    "binding_digest",
    "binding_problem",
    "entry_rule",
    "grant_state",
    "holds_no_document",
    "load_config",
    "open_dir",
    "parse_config",
    "parse_dotenv",
    "parse_expiry",
    "plan_credential_files",
    "read_allowlist",
    "read_credential",
    "read_dotenv",
    "replace_file",
    "write_new",
]
