"""A raw JSON-RPC client for the benches: times prompts against an agent process over real stdio.

It only splits lines and looks for the response id, so nearly all the measured time is the
agent's (framework, runner, server, JSON encoding): what an editor in another process sees.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time


async def prompt_seconds(script: str, *args: str, repeat: int) -> list[float]:
    """Seconds of `repeat` prompts ("go"), each in a new session, served by `python -c script args...`.

    A first prompt warms the process up and is not counted.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=2**24,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def call(request_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
        stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
        )
        await stdin.drain()
        while True:
            line = await stdout.readline()
            if not line:
                raise RuntimeError(f"the agent process exited before answering {method}")
            if b'"method"' in line[:40]:
                continue
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    await call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    times: list[float] = []
    for i in range(repeat + 1):
        # A fresh session per prompt, like the in-process baselines (no growing history to store).
        created = await call(1 + 2 * i, "session/new", {"cwd": tempfile.gettempdir(), "mcpServers": []})
        session_id = created["result"]["sessionId"]  # pyright: ignore[reportIndexIssue, reportUnknownVariableType]
        start = time.perf_counter()
        answer = await call(
            2 + 2 * i, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        )
        assert answer["result"]["stopReason"] == "end_turn", answer  # pyright: ignore[reportIndexIssue]
        times.append(time.perf_counter() - start)
    stdin.close()
    await process.wait()
    return times[1:]
