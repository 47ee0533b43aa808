"""Tests of the isolation audit (docs/audit.md); ``generate_homes`` is shared with bench/audit_scale.py."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent

BACKENDS = ("local", "local", "local", "docker", "ssh", "singularity", "modal", "daytona")
CWDS = (None, ".", "auto", "cwd", "~/work", "workspace", "nested/dir", "/tmp")
MODES = ("manual", "manual", "strict", "smart", "off")
DENY = ("git push *", "curl *", "rm -rf *", "kubectl delete *", "docker push *", "sudo *")
ALLOW = ("git status", "git log *", "ls *.txt", "npm run test:*", "make *", "python *")


def _yaml_list(items: list[str]) -> str:
    return "[" + ", ".join(repr(i) for i in items) + "]"


def generate_homes(root: Path, count: int, *, seed: int = 7) -> Path:
    """``count`` varied, valid profile homes under ``root/profiles`` and a multiplex.yaml.

    Backends, cwd forms, env, passthrough, credential files (nested, a symlink
    inside the home), allowlists (also the legacy stringified form), deny
    rules, approval modes and the redaction switch (config and .env override)
    all vary. Returns the config path.
    """
    rng = random.Random(seed)
    profiles = root / "profiles"
    for i in range(count):
        name = f"p{i:03d}"
        home = profiles / name
        (home / "credentials").mkdir(parents=True)
        backend = BACKENDS[i % len(BACKENDS)]
        cwd = CWDS[(i // 2) % len(CWDS)]
        if cwd in ("workspace", "nested/dir"):
            (home / cwd).mkdir(parents=True)
        env = {f"VAR_{j}": f"value-{i}-{j}" for j in range(rng.randint(0, 3))}
        dotenv = {
            f"API_TOKEN_{i}": f"tok-{i}-{rng.getrandbits(64):016x}",
            f"PLAIN_{i}": f"plain-{i}",
        }
        passthrough = rng.sample(sorted(dotenv), rng.randint(0, 2))
        if i % 9 == 0:
            passthrough.append("NOT_IN_DOTENV")  # a warning, not an error
        creds: list[str] = []
        if i % 3 != 2:
            (home / "credentials" / "key.json").write_text(
                f'{{"key": "cred-{i}-{rng.getrandbits(64):x}"}}\n'
            )
            creds.append("credentials/key.json")
        if i % 5 == 0:
            (home / "credentials" / "nested").mkdir()
            (home / "credentials" / "nested" / "deep.pem").write_text(
                f"pem-{i}-{rng.getrandbits(80):x}\n"
            )
            creds.append("credentials/nested/deep.pem")
        if i % 7 == 0:
            (home / "secret.txt").write_text(f"linked-{i}-{rng.getrandbits(64):x}\n")
            os.symlink("../secret.txt", home / "credentials" / "link.txt")
            creds.append("credentials/link.txt")
        allow = rng.sample(ALLOW, rng.randint(0, 4))
        allow_text = (
            repr(str(allow)) if i % 11 == 4 else _yaml_list(allow)
        )  # legacy stringified list
        deny = rng.sample(DENY, rng.randint(0, 3))
        redact = "false" if i % 4 == 1 else "true"
        if i % 6 == 3:
            dotenv["MULTIPLEX_REDACT_SECRETS"] = "off"
        lines = [
            f"# generated profile {name}",
            "terminal:",
            f"  backend: {backend}",
            f"  cwd: {cwd if cwd is not None else 'null'}",
            "  env: {" + ", ".join(f"{k}: {v!r}" for k, v in env.items()) + "}",
            f"  env_passthrough: {_yaml_list(passthrough)}",
            f"  credential_files: {_yaml_list(creds)}",
            f"  host_mounts: {_yaml_list(['/srv/data'] if i % 10 == 3 else [])}",
            f"  timeout: {rng.choice([30, 60, 180])}",
            f"command_allowlist: {allow_text}",
            "approvals:",
            f"  mode: {MODES[i % len(MODES)]}",
            f"  deny: {_yaml_list(deny)}",
            f"  unattended: {'approve' if i % 8 == 5 else 'deny'}",
            f"  yolo: {'true' if i % 13 == 12 else 'false'}",
            "security:",
            f"  redact_secrets: {redact}",
            "extra_unknown_key: kept",
        ]
        (home / "config.yaml").write_text("\n".join(lines) + "\n")
        (home / ".env").write_text("".join(f"{k}={v}\n" for k, v in dotenv.items()))
    config = root / "multiplex.yaml"
    config.write_text(
        "profiles_dir: profiles\ndefault_profile: p000\nroutes:\n  - {profile: p001, platform: webhook}\n"
    )
    return config


def run_multiplex(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with the audit command loaded (whatever the command table lists)."""
    from multiplex.audit._standalone import PROBE_ENTRY

    full = dict(os.environ)
    full["PYTHONPATH"] = str(REPO)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, *PROBE_ENTRY, *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=240,
    )
