"""The scripted chat model of the LangChain tests: langchain-acp's public `ScriptedChatModel`.

The tests use the model users get (`from langchain_acp import ScriptedChatModel`), under the short
names they were written with.
"""

from __future__ import annotations

from langchain_acp import ScriptedChatModel, ScriptedReply, ScriptedToolCall
from langchain_acp._scripted_model import Script

FakeChatModel = ScriptedChatModel
Reply = ScriptedReply
Call = ScriptedToolCall

__all__ = ["Call", "FakeChatModel", "Reply", "Script"]
