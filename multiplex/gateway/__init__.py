"""The HTTP gateway (docs/gateway.md): ``create_app`` for embedding, ``serve`` for ``multiplex up``.

Its rooms, one concept each (docs/design.md): ``http`` serving and HTTP
plumbing, ``api`` the routes and their models, ``runs`` runs and what they
keep, ``events`` server-sent events, ``shared`` cluster mode, ``journal`` the
run journal, ``mcp`` the MCP server; ``_gateway`` ties them to one supervisor.
"""

from multiplex.gateway.http._app import create_app
from multiplex.gateway.http._auth import Principal
from multiplex.gateway.http._server import GatewayServer, serve

__all__ = ["GatewayServer", "Principal", "create_app", "serve"]
