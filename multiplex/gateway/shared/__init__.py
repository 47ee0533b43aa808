"""The gateway in cluster mode: runs, prompts and events shared through Redis (docs/cluster.md)."""
