"""Remote ACP: serve an agent over WebSocket and Streamable HTTP (`acpkit serve`), and reach one by URL.

Needs the `serve` extra: `pip install "acpkit-core[serve]"` (Starlette, uvicorn, websockets, httpx).
Nothing here is imported by the stdio path.
"""

from __future__ import annotations

from .app import CONNECTION_HEADER, SESSION_HEADER, Endpoint
from .auth import TOKENS_ENV, Tokens, is_loopback, origin_allowed
from .budget import InflightBudget
from .child import AgentCommand, ChildConnection
from .client import RemoteError, open_transport, read_token, remote_headers
from .connect import open_remote
from .connection import FrameTransport, RemoteConnection
from .guard import ConnectionGuard
from .limits import Limits
from .quotas import PrincipalQuotas
from .resume import ResumingTransport
from .server import RemoteServer, ServeOptions, SharedStore, run_remote, serve_remote

__all__ = [
    "CONNECTION_HEADER",
    "SESSION_HEADER",
    "TOKENS_ENV",
    "AgentCommand",
    "ChildConnection",
    "ConnectionGuard",
    "Endpoint",
    "FrameTransport",
    "InflightBudget",
    "Limits",
    "PrincipalQuotas",
    "RemoteConnection",
    "RemoteError",
    "RemoteServer",
    "ResumingTransport",
    "ServeOptions",
    "SharedStore",
    "Tokens",
    "is_loopback",
    "open_remote",
    "open_transport",
    "origin_allowed",
    "read_token",
    "remote_headers",
    "run_remote",
    "serve_remote",
]
