"""Commands that serve: the gateway, its container init, MCP over stdio and agent hooks (docs/agents.md, docs/gateway.md)."""
