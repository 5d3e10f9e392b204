"""A real local HTTP server speaking OpenAI's chat-completions API, for the custom-endpoint tests.

It streams its answer as server-sent events (the chunks a real provider sends: the role, the text
in pieces, the finish reason, then the usage) or answers in one JSON object for a request without
`stream`, and records every request (path, headers, JSON body) so a test can check what the agent
really sent: the key the client gave, the model name, the conversation.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class Recorded:
    """One request the stub received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class OpenAIStub:
    """The server's script and what it received; `url` is its base URL (`http://127.0.0.1:PORT/v1`)."""

    pieces: Sequence[str] = ("Hello from ", "the editor's endpoint.")
    requests: list[Recorded] = field(default_factory=list[Recorded])
    url: str = ""

    def _chunk(self, model: str, delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [choice],
        }
        return f"data: {json.dumps(body)}\n\n"

    async def _events(self, model: str) -> AsyncIterator[str]:
        yield self._chunk(model, {"role": "assistant", "content": ""})
        for piece in self.pieces:
            yield self._chunk(model, {"content": piece})
        yield self._chunk(model, {}, "stop")
        usage = {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}
        body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": []}
        yield f"data: {json.dumps({**body, 'usage': usage})}\n\n"
        yield "data: [DONE]\n\n"

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(Recorded(path=request.url.path, headers=dict(request.headers), body=body))
        model = str(body.get("model"))
        if body.get("stream"):
            return StreamingResponse(self._events(model), media_type="text/event-stream")
        message = {"role": "assistant", "content": "".join(self.pieces)}
        usage = {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        answer = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model, "choices": [choice]}
        return JSONResponse({**answer, "usage": usage})


@asynccontextmanager
async def openai_stub(pieces: Sequence[str] = ("Hello from ", "the editor's endpoint.")) -> AsyncGenerator[OpenAIStub]:
    """Serve an `OpenAIStub` on a free local port while the block runs."""
    stub = OpenAIStub(pieces=pieces)
    app = Starlette(routes=[Route("/v1/chat/completions", stub.completions, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    stub.url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield stub
    finally:
        server.should_exit = True
        await task
        sock.close()
