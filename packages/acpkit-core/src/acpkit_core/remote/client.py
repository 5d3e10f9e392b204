"""The client side of the remote transport: reach an `acpkit serve` (or any RFD server) by URL.

`ws://` / `wss://` URLs use the WebSocket profile, `http://` / `https://` Streamable HTTP. Both are
the ACP SDK's own client transports (`acp.ws`, `acp.http`); this module adds the bearer token,
and turns a refused handshake into a [`RemoteError`][acpkit_core.remote.RemoteError] saying why.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from websockets.exceptions import InvalidStatus

from ..errors import UserError

__all__ = ["RemoteError", "open_transport", "read_token", "remote_headers"]


class RemoteError(UserError):
    """The remote agent could not be reached or refused the connection."""


def read_token(token_file: str | Path | None) -> str | None:
    """The token in `token_file` (its first non-blank line; `principal:token` lines give the token)."""
    if token_file is None:
        return None
    try:
        text = Path(token_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise RemoteError(f"cannot read the token file {str(token_file)!r}: {exc.strerror}") from None
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line.rpartition(":")[2].strip()
    raise RemoteError(f"the token file {str(token_file)!r} holds no token")


def remote_headers(token: str | None) -> dict[str, str]:
    """The request headers for `token` (none without one)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def _refusal(url: str, status: int, body: str) -> RemoteError:
    reasons = {401: "the server wants a valid token (--token-file)", 403: "the server refused this origin"}
    detail = reasons.get(status) or body.strip()[:200] or "refused"
    return RemoteError(f"{url}: HTTP {status}: {detail}")


class _OwningTransport:
    """The SDK's Streamable HTTP transport, and the HTTP client it uses, closed together."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        from acp.http import create_http_stream

        self._abandoned = False
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None),
            http2=url.startswith("https://"),
            event_hooks={"request": [self._check]},
        )
        self._inner = create_http_stream(url, client=self._client, headers=headers)

    async def _check(self, request: httpx.Request) -> None:
        if self._abandoned and request.method == "DELETE":
            raise httpx.RequestError("abandoned: the connection is not ended", request=request)

    async def send(self, message: dict[str, Any]) -> None:
        await self._inner.send(message)

    async def receive(self) -> dict[str, Any] | None:
        return await self._inner.receive()

    async def close(self) -> None:
        try:
            await self._inner.close()
        finally:
            await self._client.aclose()

    async def abandon(self) -> None:
        """Close without the `DELETE` (the connection dropped: its server-side state is left to the server)."""
        self._abandoned = True
        await self.close()


async def open_transport(url: str, *, token: str | None = None) -> Any:
    """A connected message transport to `url` (the SDK's `Transport` protocol)."""
    headers = remote_headers(token)
    if url.startswith(("ws://", "wss://")):
        from acp.ws import create_websocket_stream

        try:
            return await create_websocket_stream(url, headers=headers)
        except InvalidStatus as exc:
            response = exc.response
            raise _refusal(url, response.status_code, bytes(response.body or b"").decode("utf-8", "replace")) from None
        except OSError as exc:
            raise RemoteError(f"{url}: cannot connect: {exc.strerror or exc}") from None
    if url.startswith(("http://", "https://")):
        return _OwningTransport(url, headers)
    raise RemoteError(f"not a remote agent URL: {url!r} (use ws://, wss://, http:// or https://)")


def abort_socket(transport: object) -> None:
    """Drop the WebSocket's socket if closing it left it open (its close failed or was cancelled):
    nothing is left for the garbage collector to close."""
    ws: object = getattr(transport, "_ws", None)  # the SDK's WebSocket transport keeps its connection there
    socket: object = getattr(ws, "transport", None)
    if isinstance(socket, asyncio.Transport) and not socket.is_closing():
        socket.abort()
