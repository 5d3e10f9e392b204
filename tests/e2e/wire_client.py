"""A raw line-level client for agent processes: send any bytes, read every reply."""

# pyright: basic
# (these tests handle arbitrary JSON from the wire: Any, narrowed by isinstance)

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPTED_AGENT = str(Path(__file__).parent / "agents" / "scripted_agent.py")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

Reply = Any
"""One JSON value the agent wrote (a message, or a batch's array of answers)."""


class WireAgent:
    """An agent process fed raw lines; replies and notifications are collected as they come."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.received: list[Reply] = []
        self._next_id = 1000

    @classmethod
    async def start(cls, *argv: str, env: dict[str, str] | None = None) -> WireAgent:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
            limit=1 << 24,
        )
        return cls(process)

    @classmethod
    async def scripted(cls, *args: str, env: dict[str, str] | None = None) -> WireAgent:
        return await cls.start(sys.executable, SCRIPTED_AGENT, "--store", "memory", *args, env=env)

    async def send_line(self, line: bytes | str) -> None:
        data = line.encode() if isinstance(line, str) else line
        assert self.process.stdin is not None
        self.process.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        await self.process.stdin.drain()

    async def send(self, message: Any) -> None:
        await self.send_line(json.dumps(message))

    async def read(self, timeout: float = 30) -> Reply:
        """The next line the agent writes, parsed (every line must be JSON)."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, f"the agent closed stdout (exit code {self.process.returncode})"
        value = json.loads(line)
        self.received.append(value)
        return value

    async def until(self, request_id: int | str, timeout: float = 30) -> tuple[Any, list[Reply]]:
        """Read up to the response to `request_id`; returns it and everything read before it."""
        before: list[Reply] = []
        while True:
            reply = await self.read(timeout)
            if isinstance(reply, dict) and reply.get("id") == request_id and "method" not in reply:
                return reply, before
            before.append(reply)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}})
        reply, _ = await self.until(self._next_id)
        return reply

    async def alive(self) -> list[Reply]:
        """Check the agent still answers; returns what it wrote before that answer."""
        self._next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self._next_id, "method": "session/list", "params": {}})
        reply, before = await self.until(self._next_id)
        assert "result" in reply, reply
        return before

    async def close(self) -> tuple[int, str]:
        """Close stdin; the exit code and everything the agent wrote to stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        stderr = await asyncio.wait_for(self.process.stderr.read(), 20)
        code = await asyncio.wait_for(self.process.wait(), 20)
        return code, stderr.decode(errors="replace")

    async def __aenter__(self) -> WireAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()


def errors(replies: list[Reply]) -> list[tuple[Any, int]]:
    """`(id, code)` of each error response among `replies` (notifications left out)."""
    out: list[tuple[Any, int]] = []
    for reply in replies:
        items: list[Any] = reply if isinstance(reply, list) else [reply]
        for item in items:
            if isinstance(item, dict) and "error" in item:
                out.append((item.get("id"), item["error"]["code"]))
    return out


def agent_text(replies: list[Reply]) -> str:
    """The agent message text streamed in `replies`."""
    return "".join(
        r["params"]["update"]["content"].get("text", "")
        for r in replies
        if isinstance(r, dict)
        and r.get("method") == "session/update"
        and r["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
    )


def run_in_terminal(*argv: str) -> tuple[int, str]:
    """Run a command with a pseudo-terminal as stdin, stdout and stderr; its exit code and what it showed."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(list(argv), stdin=terminal, stdout=terminal, stderr=terminal)
        code = process.wait(timeout=60)
    finally:
        os.close(terminal)
    shown = b""
    try:
        while chunk := os.read(controller, 4096):
            shown += chunk
    except OSError:  # the other side is closed: all read
        pass
    finally:
        os.close(controller)
    return code, shown.decode().replace("\r\n", "\n")
