"""Use an ACP agent from Python: the framework-neutral half of "an ACP agent as a model".

[`RemoteAgent`][acpkit_core.delegate.RemoteAgent] starts any stdio ACP agent (an `acpkit run`
target via [`acpkit_run_command`][acpkit_core.delegate.acpkit_run_command], or another vendor's
agent command) and opens sessions on it; a [`RemoteSession`][acpkit_core.delegate.RemoteSession]
streams a prompt's answer as [`RemoteEvent`][acpkit_core.delegate.RemoteEvent]s and sends
`session/cancel` when the caller stops listening. [`ConversationSessions`][acpkit_core.delegate.ConversationSessions]
maps a framework's message history onto remote sessions. `pydantic_acp.AcpModel` and
`langchain_acp.AcpChatModel` are thin wrappers over these;
[`acpkit_core.delegate.structured`][acpkit_core.delegate.structured] turns a framework's request
for structured output into one JSON answer and back.
"""

from __future__ import annotations

from .conversations import ConversationSessions, Turn, conversation_key, prompt_text, transcript
from .events import RemoteEvent, RemoteText, RemoteThought, RemoteToolCall, RemoteTurnEnd
from .remote import (
    ContentBlock,
    PermissionAnswerer,
    RemoteAgent,
    RemoteAgentError,
    RemotePermissions,
    RemoteSession,
    acpkit_run_command,
)
from .structured import OutputChoice, answer_instructions, answer_schema, answer_text, parse_answer

__all__ = [
    "ContentBlock",
    "ConversationSessions",
    "OutputChoice",
    "PermissionAnswerer",
    "RemoteAgent",
    "RemoteAgentError",
    "RemoteEvent",
    "RemotePermissions",
    "RemoteSession",
    "RemoteText",
    "RemoteThought",
    "RemoteToolCall",
    "RemoteTurnEnd",
    "Turn",
    "acpkit_run_command",
    "answer_instructions",
    "answer_schema",
    "answer_text",
    "conversation_key",
    "parse_answer",
    "prompt_text",
    "transcript",
]
