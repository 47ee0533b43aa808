"""The HTTP gateway (docs/gateway.md): ``create_app`` for embedding, ``serve`` for ``multiplex up``."""

from multiplex.gateway._app import create_app
from multiplex.gateway._auth import Principal
from multiplex.gateway._server import GatewayServer, serve

__all__ = ["GatewayServer", "Principal", "create_app", "serve"]
