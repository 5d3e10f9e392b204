"""What watching model calls for fallbacks costs per streamed token (langchain-acp), side by side.

    uv run python bench/fallback_watch_bench.py [--tokens 2000] [--runs 5]

The runner's `AcpCallbackHandler` watches model calls (`fallback_notices=True`) so a model that
takes over from a failed one is told to the user. LangChain then calls it for every model event,
tokens included. This serves the same `create_agent` graph streaming N tokens to an in-process
client twice, with the handler as served and with one that does not watch (LangChain then skips
it for model events), and prints the best time per token of each.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "langchain"))

import langchain_acp._runner as runner_module  # noqa: E402  # pyright: ignore[reportPrivateUsage]
from acpkit_core.testing import AcpTestClient  # noqa: E402
from fake_model import FakeChatModel, Reply  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_acp import create_acp_agent  # noqa: E402
from langchain_acp._callbacks import AcpCallbackHandler  # noqa: E402


class _Deaf(AcpCallbackHandler):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "fallback_notices": False})


async def per_token(tokens: int, runs: int) -> float:
    graph = create_agent(FakeChatModel(script=[Reply(text=["tok "] * tokens)], repeat_last=True), tools=[])
    best = float("inf")
    async with AcpTestClient.connect(create_acp_agent(graph, store="memory")) as client:
        await client.initialize()
        sid = await client.new_session()
        await client.prompt("warm up", session_id=sid)
        for _ in range(runs):
            start = time.perf_counter()
            await client.prompt("go", session_id=sid)
            best = min(best, time.perf_counter() - start)
    return best / tokens


async def main(tokens: int, runs: int) -> None:
    original: Any = getattr(runner_module, "AcpCallbackHandler")  # noqa: B009
    watching = deaf = float("inf")
    for _ in range(2):  # alternated, so neither gains from running second
        watching = min(watching, await per_token(tokens, runs))
        setattr(runner_module, "AcpCallbackHandler", _Deaf)  # noqa: B010
        try:
            deaf = min(deaf, await per_token(tokens, runs))
        finally:
            setattr(runner_module, "AcpCallbackHandler", original)  # noqa: B010
    print(f"per token, {tokens} tokens, best of {runs} (in-process client):")
    print(f"  not watching model calls: {deaf * 1e6:7.1f} µs")
    print(f"  watching (as served):     {watching * 1e6:7.1f} µs  ({watching / deaf:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.tokens, args.runs))
