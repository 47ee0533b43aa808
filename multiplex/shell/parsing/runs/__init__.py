"""What an argv runs beyond itself: wrappers (sudo, env, timeout), launchers and remote
runners (docker exec, kubectl exec, ssh, salt), the global options before a verb, shell and
script payloads, and files the line writes then runs (docs/approvals.md#parsing)."""
