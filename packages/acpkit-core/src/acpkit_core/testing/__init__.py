"""Test your ACP agent like an editor would: [`AcpTestClient`][acpkit_core.testing.AcpTestClient]."""

from __future__ import annotations

from .answers import ElicitationAnswer, PermissionAnswer
from .client import AcpTestClient
from .results import PromptResult, ToolCallState
from .scripted import ScriptedRunner

__all__ = ["AcpTestClient", "ElicitationAnswer", "PermissionAnswer", "PromptResult", "ScriptedRunner", "ToolCallState"]
