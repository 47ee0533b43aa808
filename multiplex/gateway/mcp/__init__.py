"""The MCP server (docs/agents.md#mcp): ``multiplex mcp`` over stdio, ``/mcp`` on ``multiplex up``."""

from multiplex.gateway.mcp._event_store import MemoryEventStore
from multiplex.gateway.mcp._http import MCP_PATH, McpEndpoint
from multiplex.gateway.mcp._service import Fixed, McpService
from multiplex.gateway.mcp._stdio import serve_stdio

__all__ = ["MCP_PATH", "Fixed", "McpEndpoint", "McpService", "MemoryEventStore", "serve_stdio"]
