"""What a command does on the network: exfiltration, reverse shells, servers of remote
access, uploads, the cloud metadata service (docs/security.md)."""
