"""Requests that wait for a human: prompts, their deadlines, and how every wait ends (docs/approvals.md#outcomes-and-what-the-agent-sees)."""
