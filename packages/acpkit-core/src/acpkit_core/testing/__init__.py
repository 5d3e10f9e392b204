"""Test your ACP agent like an editor would: [`AcpTestClient`][acpkit_core.testing.AcpTestClient]."""

from __future__ import annotations

from .client import AcpTestClient, ElicitationAnswer, PermissionAnswer
from .results import PromptResult, ToolCallState
from .scripted import ScriptedRunner

__all__ = ["AcpTestClient", "ElicitationAnswer", "PermissionAnswer", "PromptResult", "ScriptedRunner", "ToolCallState"]
