"""An `acpkit serve` target for the reconnect tests: a LangGraph agent (the scripted chat model) whose turn
streams text, calls a tool, asks permission for another, and streams on, the same every time.

Its store comes from `$REPLICA_STORE`; `$RECONNECT_CHUNK_DELAY` paces the stream.
"""

from __future__ import annotations

import asyncio
import os

from acpkit_core.permissions import PermissionPolicy
from langchain.agents import create_agent
from langchain_acp import ScriptedChatModel, ScriptedReply, ScriptedToolCall, create_acp_agent
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

DELAY = float(os.environ.get("RECONNECT_CHUNK_DELAY", "0.003"))
WORDS = 30


def reply(messages: list[BaseMessage]) -> ScriptedReply:
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    step = sum(isinstance(m, ToolMessage) for m in messages[start + 1 :])
    text = [f"s{step}w{i} " for i in range(WORDS)]
    calls: list[ScriptedToolCall] = []
    if step == 0:
        calls = [ScriptedToolCall(name="lookup", args={"topic": "tides"}, id="call-lookup")]
    elif step == 1:
        calls = [ScriptedToolCall(name="write_note", args={"text": "high tide"}, id="call-write")]
    return ScriptedReply(text=text, calls=calls, delay=DELAY)


@tool
async def lookup(topic: str) -> str:
    """Look a topic up."""
    await asyncio.sleep(DELAY)
    return f"{topic}: twice a day"


@tool
async def write_note(text: str) -> str:
    """Write a note (asks permission first)."""
    return f"noted: {text}"


agent = create_acp_agent(
    create_agent(ScriptedChatModel(script=[reply], repeat_last=True), tools=[lookup, write_note]),
    name="reconnect-langgraph",
    store=os.environ["REPLICA_STORE"],
    permission_policy=PermissionPolicy(ask=("write_note",)),
    coalesce_ms=0,  # every delta its own update: a cut turn must give back the reference's updates one by one
)
