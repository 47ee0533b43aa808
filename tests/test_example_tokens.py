"""docs/security.md#tokens-and-ids: the example homes ship no working token; `make run` writes one.

The homes ship ``.env.example`` (tracked) and no ``.env``: ``make tokens`` makes
each ``.env`` (untracked, mode 0600) from its example and writes the token
there, so no tracked file changes (issue 31 item 9).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from multiplex.profiles import MIN_TOKEN_LENGTH, TOKEN_KEY, parse_dotenv
from tests.conftest import REPO


def test_the_example_homes_ship_no_token_and_no_env() -> None:
    examples = sorted((REPO / "profiles").glob("*/.env.example"))
    assert examples
    for env in examples:
        assert TOKEN_KEY not in parse_dotenv(env.read_text(), file=env), env
    tracked = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "profiles"], capture_output=True, text=True
    ).stdout.split()
    assert tracked and not [p for p in tracked if p.endswith("/.env")]


def test_make_tokens_writes_one_random_token_per_home_once(tmp_path: Path) -> None:
    shutil.copytree(REPO / "profiles", tmp_path / "profiles")
    for env in (tmp_path / "profiles").glob("*/.env"):
        env.unlink()  # a fresh clone has only the examples
    examples = {e: e.read_bytes() for e in (tmp_path / "profiles").glob("*/.env.example")}
    make = ["make", "-s", "-C", str(tmp_path), "-f", str(REPO / "Makefile"), "tokens"]
    first = subprocess.run(
        [*make, f"BIN={REPO / '.venv/bin'}"], capture_output=True, text=True, check=True
    )
    envs = sorted((tmp_path / "profiles").glob("*/.env"))
    assert len(envs) == len(examples)
    assert all(e.stat().st_mode & 0o777 == 0o600 for e in envs)
    assert {e: e.read_bytes() for e in examples} == examples  # the tracked files unchanged
    tokens = {}
    for env in envs:
        values = parse_dotenv(env.read_text(), file=env)  # still a valid .env
        tokens[env] = values[TOKEN_KEY]
        assert len(values[TOKEN_KEY]) >= MIN_TOKEN_LENGTH
        assert f"MULTIPLEX_TOKEN in profiles/{env.parent.name}/.env" in first.stdout
    assert len(set(tokens.values())) == len(envs)
    second = subprocess.run(
        [*make, f"BIN={REPO / '.venv/bin'}"], capture_output=True, text=True, check=True
    )
    assert "generated" not in second.stdout
    assert {e: parse_dotenv(e.read_text(), file=e)[TOKEN_KEY] for e in envs} == tokens


def test_make_tokens_keeps_a_token_the_operator_wrote_in_any_dotenv_form(tmp_path: Path) -> None:
    # `export MULTIPLEX_TOKEN=…` and `MULTIPLEX_TOKEN = "…"` are tokens the .env reader
    # takes; `make run` used to append a second one, which won (the operator's got 401).
    given = "abcdefghijklmnopqrstuvwxyz012345"
    forms = [f"export MULTIPLEX_TOKEN={given}\n", f'MULTIPLEX_TOKEN = "{given}"\n']
    for n, form in enumerate(forms):
        home = tmp_path / "profiles" / f"p{n}"
        home.mkdir(parents=True)
        (home / ".env").write_text(form)
        (home / ".env").chmod(0o600)
    make = ["make", "-s", "-C", str(tmp_path), "-f", str(REPO / "Makefile"), "tokens"]
    done = subprocess.run(
        [*make, f"BIN={REPO / '.venv/bin'}"], capture_output=True, text=True, check=True
    )
    assert "generated" not in done.stdout
    for n, form in enumerate(forms):
        env = tmp_path / "profiles" / f"p{n}" / ".env"
        assert env.read_text() == form
        assert parse_dotenv(env.read_text(), file=env)[TOKEN_KEY] == given
