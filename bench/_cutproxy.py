"""A TCP proxy between a client and `acpkit serve` that can cut every connection it carries (not the
server): figure 6 of `remote_bench.py` (after `tests/remote/cutproxy.py`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator


class CutProxy:
    """Forwards `127.0.0.1:port` to a target; `cut()` resets every connection passing through now."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.cuts = 0
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> CutProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, scheme: str, path: str = "/acp") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)
        a = asyncio.ensure_future(self._pipe(reader, up_writer))
        b = asyncio.ensure_future(self._pipe(up_reader, writer))
        for task in (a, b):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        await asyncio.wait({a, b}, return_when=asyncio.FIRST_COMPLETED)
        self._close(pair)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()

    def _close(self, pair: tuple[asyncio.StreamWriter, asyncio.StreamWriter]) -> None:
        self._pairs.discard(pair)
        for writer in pair:
            transport = writer.transport
            if not transport.is_closing():
                transport.abort()  # a reset: what was in flight is lost, as when a network drops

    def cut(self) -> int:
        """Reset every connection now; how many there were."""
        pairs = list(self._pairs)
        for pair in pairs:
            self._close(pair)
        self.cuts += 1
        return len(pairs)

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()


@contextlib.asynccontextmanager
async def cut_proxy(host: str, port: int) -> AsyncGenerator[CutProxy]:
    """A started proxy to `host:port`, closed on exit."""
    proxy = await CutProxy(host, port).start()
    try:
        yield proxy
    finally:
        await proxy.close()
