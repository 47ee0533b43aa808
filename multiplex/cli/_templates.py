"""The commented config.yaml that ``profiles init`` writes."""

__all__ = ["CONFIG_TEMPLATE", "config_template"]

CONFIG_TEMPLATE = """\
# Profile home config for multiplex (see docs/configuration.md).
# Every key is optional; the values below are the defaults.

terminal:
  backend: local          # local | docker | ssh | singularity | modal | daytona
  cwd: null               # null/"."/auto/cwd = $HOME (local) or the backend default; "~/x" expands; relative = against this home
  env: {}                 # extra variables for this profile's commands
  env_passthrough: []     # names copied from this home's .env into command env
  credential_files: []    # paths relative to this home, e.g. credentials/token.json
  host_mounts: []         # container backends: host paths mounted in (non-empty = host access)
  timeout: 180            # seconds per command

# Pre-approved command rules ("git status", "git log *", "npm run test:*").
# "always" answers add to this list; remove a line to revoke at once.
command_allowlist: []

approvals:
  mode: manual            # manual | strict | smart | off
  deny: []                # rules nothing bypasses, e.g. "git push *"
  timeout: 300            # seconds an approval waits (1 .. 31536000)
  unattended: deny        # what cron/webhook/single-query turns get: deny | approve
  protected_files: [AGENTS.md, SOUL.md, .env, config.yaml]
  yolo: false             # approve everything for this profile (deny rules still apply)

security:
  redact_secrets: true
"""


def config_template(mode: str) -> str:
    """The template with ``approvals.mode`` set to ``mode`` (docs/approvals.md#modes)."""
    line = "  mode: manual            # manual | strict | smart | off"
    return CONFIG_TEMPLATE.replace(line, f"  mode: {mode:<18}# manual | strict | smart | off", 1)
