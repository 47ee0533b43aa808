"""The credential stores ``secret-read`` knows by path (docs/security.md#named-patterns).

Data only: the globs (``~`` a home, ``*/`` any home or folder above) and the
substrings each of them holds, which ``_secret_paths`` searches for first (one
regex in C) before it matches the globs. A pure leaf.
"""

from __future__ import annotations

__all__ = ["SECRETS", "SECRET_KEYS"]

SECRETS = (
    "~/.ssh", "~/.ssh/id_*", "*/.ssh/id_*", "~/.aws", "~/.aws/*", "*/.aws/credentials",
    "~/.config/gcloud", "~/.config/gcloud/*", "~/.kube", "~/.kube/config", "*/.kube/config",
    "~/.netrc", "*/.netrc", "~/.docker/config.json", "*/.docker/config.json",
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/ssh/ssh_host_*_key", "~/.git-credentials", "*/.git-credentials", "~/.gnupg",
    "~/.gnupg/*", "~/.password-store", "~/.password-store/*", "~/.pgpass", "~/.pypirc",
    "~/.npmrc", "~/.config/gh/hosts.yml", "~/.azure", "~/.azure/*", "*/.vault-token",
    "~/credentials", "~/credentials/*", "/var/run/secrets/*", "/run/secrets/*",
    "~/.terraform.d/credentials.tfrc.json", "*/.terraform.d/credentials.tfrc.json",
    "~/.terraformrc", "~/.config/gh", "~/.config/gh/*", "*/.npmrc", "*/.pypirc",
    "~/.docker", "~/.config/hub", "~/.cargo/credentials*", "~/.gem/credentials",
    # more tools' credential stores, browsers' saved logins, histories that hold typed tokens
    "~/.config/git/credentials", "~/.m2/settings.xml", "~/.m2/settings-security.xml",
    "~/.gradle/gradle.properties", "~/.yarnrc.yml", "~/.boto", "~/.s3cfg",
    "~/.config/rclone/rclone.conf", "~/.my.cnf", "~/.mylogin.cnf", "~/.netrc.gpg",
    "~/.local/share/keyrings", "~/.local/share/keyrings/*", "~/.config/op", "~/.config/op/*",
    "~/.mozilla/firefox/*/logins.json", "~/.mozilla/firefox/*/key4.db",
    "~/.mozilla/firefox/*/cookies.sqlite", "~/.config/google-chrome/*/Login Data",
    "~/.config/google-chrome/*/Cookies", "~/.config/chromium/*/Login Data",
    "~/.config/chromium/*/Cookies", "~/.bash_history", "~/.zsh_history", "~/.python_history",
    "~/.psql_history", "~/.mysql_history", "~/.node_repl_history", "~/.sqlite_history",
    "/proc/*/environ", "~/.config/Code/User/globalStorage/*",
    # cloud and hosting CLIs' tokens, an app's own master keys
    "~/.config/doctl/config.yaml", "~/.oci", "~/.oci/*", "~/.netlify/config.json",
    "~/.vercel/auth.json", "~/.local/share/com.vercel.cli/auth.json", "*/config/master.key",
    "*/config/credentials/*.key", "*/config/secrets.yml",
    # any key in a .ssh folder (x.pem, deploy_key), but its public files (_SSH_PUBLIC)
    "~/.ssh/*", "*/.ssh/*",
    # more CLIs' tokens: PaaS, data warehouses, tunnels, AI assistants
    "~/.config/heroku/*", "~/.circleci/cli.yml", "~/.config/configstore/*",
    "~/.config/netlify/*", "~/.config/vercel/*", "~/.fly/config.yml", "~/.pulumi/credentials.json",
    "~/.databrickscfg", "~/.snowsql/config", "~/.cloudflared/*", "~/.config/hcloud/cli.toml",
    "~/.wrangler/config/*", "~/.config/.wrangler/config/*", "~/.sentryclirc",
    "~/.dbt/profiles.yml", "~/.config/github-copilot/*", "~/.config/anthropic/*", "~/.openai/*",
    "~/.config/openai/*", "~/.codex/auth.json", "~/.claude/.credentials.json",
    "~/.supabase/access-token", "~/.snowflake/*", "~/.travis/config.yml", "~/.jfrog/*",
    # every REPL's and client's history (redis AUTH, a pasted token); more package
    # registries' and clouds' credentials; VPN, TLS and tunnel keys; mail clients' passwords
    "~/.*_history", "~/.histfile", "~/.zhistory", "~/.local/state/zsh/history", "~/.viminfo",
    "~/.lesshst", "~/.local/share/nvim/shada/*", "~/.local/state/nvim/shada/*", "~/.Rhistory",
    "*/.Rhistory", "~/.octave_hist", "~/.julia/logs/repl_history.jl", "~/.dbshell",
    "~/.ipython/profile_*/history.sqlite", "~/.local/share/atuin/history.db",
    "~/.zsh_sessions/*", "~/.bash_sessions/*", "~/.ivy2/.credentials", "~/.sbt/.credentials", "~/.nuget/NuGet/NuGet.Config",
    "~/.composer/auth.json", "~/.config/composer/auth.json", "*/auth.json", "~/.bundle/config",
    "~/.config/helm/repositories.yaml", "~/.config/argocd/config", "~/.ibmcloud/*",
    "~/.aliyun/*", "~/.config/linode-cli", "~/.config/scaleway/*", "~/.config/exoscale/*",
    "~/.ovh.conf", "~/.config/openstack/*", "*/clouds.yaml", "*/secure.yaml", "~/.tsh",
    "~/.tsh/*", "~/.config/glab-cli/*", "~/.config/tea/*", "~/.jira.d/*", "~/.config/jira",
    "~/.wakatime.cfg", "~/.config/ngrok/*", "~/.ngrok2/*", "~/.config/tailscale/*",
    "~/.config/wireguard/*", "/etc/wireguard/*", "/etc/ssl/private", "/etc/ssl/private/*",
    "/etc/letsencrypt/live/*", "/etc/letsencrypt/archive/*", "/etc/letsencrypt/keys/*",
    "~/.minikube/*.key", "~/.minikube/*/*.key", "~/.vagrant.d/insecure_private_key*",
    "*/.vagrant/machines/*/private_key", "~/.config/sops/age/*", "~/.age/*", "~/.config/age/*",
    "~/.authinfo", "~/.authinfo.gpg", "~/.msmtprc", "~/.config/msmtp/*", "~/.mbsyncrc",
    "~/.fetchmailrc", "~/.muttrc", "~/.config/mutt/*", "~/.config/hut/*",
    "~/.local/share/atuin/key",
    # the supervisor's own state beside multiplex.yaml: the gateways' admin tokens, the
    # journal of every profile's runs (docs/security.md#the-supervisors-own-controls)
    "*/.multiplex/*", ".multiplex/*", "*/.multiplex", ".multiplex",
    # every kubeconfig of the folder; a cluster's own admin, kubelet and k3s credentials
    "~/.kube/config*", "~/.kube/*.yaml", "~/.kube/*.yml", "~/.kube/*.conf", "*/.kube/config*",
    "/etc/kubernetes/*.conf", "/etc/kubernetes/pki/*", "/etc/rancher/k3s/k3s.yaml",
    "/var/lib/rancher/k3s/server/token", "/var/lib/rancher/k3s/server/cred/*",
    "/var/lib/rancher/k3s/server/tls/*", "/var/lib/kubelet/pki/*",
    # the system's own secrets: Kerberos, Wi-Fi and VPN, database maintenance, CI runners
    "/etc/krb5.keytab", "*.keytab", "/tmp/krb5cc_*", "/etc/NetworkManager/system-connections/*",
    "/etc/wpa_supplicant/*", "/etc/ppp/*-secrets", "/etc/ipsec.secrets", "/etc/mysql/debian.cnf",
    "/etc/gitlab-runner/config.toml", "*/.pgpass",
    # password managers' vaults, more browsers' logins and cookies (and the key to them)
    "*.kdbx", "~/.thunderbird/*/logins.json", "~/.thunderbird/*/key4.db",
    "~/.config/BraveSoftware/*/Login Data", "~/.config/BraveSoftware/*/Cookies",
    "~/.config/microsoft-edge/*/Login Data", "~/.config/microsoft-edge/*/Cookies",
    "~/snap/chromium/*/Login Data", "~/snap/chromium/*/Cookies", "~/.config/*/Local State",
    "~/.config/Bitwarden/data.json", "~/Library/Keychains/*",
    # tokens AI and developer tools keep; wallets and apps' saved passwords
    "~/.cache/huggingface/token", "~/.huggingface/token", "~/.kaggle/kaggle.json",
    "~/.gemini/oauth_creds.json", "~/.config/helm/registry/config.json",
    "~/.config/pypoetry/auth.toml", "~/.yarnrc", "~/.config/stripe/config.toml",
    "~/.config/doppler/*", "~/.doppler/*", "*/wallet.dat", "~/.ethereum/keystore/*",
    "~/.config/solana/id.json", "~/.android/adbkey", "~/.config/filezilla/sitemanager.xml",
    "~/.config/filezilla/recentservers.xml", "~/.purple/accounts.xml", "~/.weechat/sec.conf",
    "~/.local/share/DBeaverData/*/credentials-config.json",
    # registry tokens in package tools' settings; vault passwords; more clouds' CLIs
    "~/.bunfig.toml", "~/.config/pip/pip.conf", "~/.pip/pip.conf", "~/.vault_pass*",
    "*/.vault_pass*", "~/.ansible/vault_pass*", "~/.chef/credentials", "~/.chef/*.pem",
    "~/.config/scw/*", "~/.linode-cli",
    # more: an MCP client's servers (their env holds API keys), VPN and tunnel keys, a
    # cloud's tokens, service-account keys and a site's database password by their names
    "~/.cursor/mcp.json", "~/.claude.json", "~/.codeium/windsurf/mcp_config.json",
    "~/.config/Claude/claude_desktop_config.json", "~/.twilio-cli/*", "~/.bluemix/*",
    "~/.wireguard/*", "~/.tailscale/*", "~/.config/atuin/key", "*service-account*.json",
    "*service_account*.json", "*firebase-adminsdk*.json", "*/.htpasswd", "*/wp-config.php",
    # the kernel's memory, every process's secrets in it
    "/proc/kcore", "/dev/mem", "/dev/kmem", "/dev/port", "/proc/*/mem",
)  # fmt: skip

SECRET_KEYS = (
    ".ssh", ".aws", "gcloud", ".kube", ".netrc", ".docker", "shadow", "sudoers", "credentials",
    ".gnupg", ".password-store", ".pgpass", ".pypirc", ".npmrc", "/gh", ".azure", ".vault-token",
    "secrets", ".terraform", "/hub", ".cargo", ".gem", ".m2", ".gradle", ".yarnrc", ".boto",
    ".s3cfg", "rclone", ".my", "keyrings", "/op", "firefox", "chrom", "_history", "environ",
    "globalStorage", "doctl", ".oci", ".netlify", "vercel", "master.key", "ssh_host",
    "heroku", "circleci", "configstore", "netlify", ".fly", "pulumi", "databricks", "snowsql",
    "cloudflared", "hcloud", "wrangler", "sentry", ".dbt", "copilot", "anthropic", "openai",
    "codex", ".claude", "auth.json", ".bundle", "helm", "argocd", "ibmcloud", "aliyun", "linode",
    "scaleway", "exoscale", ".ovh", "openstack", "clouds.yaml", "secure.yaml", ".tsh", "glab",
    "tea/", "jira", "wakatime", "ngrok", "tailscale", "wireguard", "ssl/private", "letsencrypt",
    "minikube", "vagrant", "age/", "authinfo", "msmtp", "mbsync", "fetchmail", "mutt", "hut/",
    "atuin", ".ivy2", ".sbt", "NuGet", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".key",
    ".p12", ".pfx", ".jks", "keystore", ".tfstate", "privkey", "private", "key.pem",
    "supabase", "snowflake", ".travis", "jfrog", ".multiplex", "kubernetes", "rancher",
    "kubelet", "keytab", "krb5cc", "NetworkManager", "wpa_supplicant", "-secrets", "ipsec",
    "debian.cnf", "gitlab-runner", "kdbx", "thunderbird", "BraveSoftware", "microsoft-edge",
    "Local State", "Bitwarden", "Keychains", "huggingface", "kaggle", ".gemini", "pypoetry",
    "stripe", "doppler", "wallet.dat", "ethereum", "solana", "adbkey", "filezilla", "purple",
    "weechat", "DBeaver", "kcore", "/dev/mem", "/dev/kmem", "/dev/port", "/mem", "bunfig",
    "pip.conf", "vault_pass", ".chef", "scw/", "cursor/mcp", ".claude.json", "windsurf",
    "claude_desktop", "twilio", "bluemix", "service-account", "service_account",
    "firebase-adminsdk", ".htpasswd", "wp-config", "dev.vars", "token.json", "client_secret",
    ".envrc", "histfile", "zhistory", "zsh/history", "viminfo", "lesshst", "shada", "Rhistory",
    "octave_hist", "dbshell", "history.sqlite", "_sessions/",
)  # fmt: skip
