"""ACP Kit core: the framework-neutral half of serving a Python agent over the Agent Client Protocol.

It parses ACP prompts into a neutral IR ([`parse_prompt`][acpkit_core.prompt.parse.parse_prompt]),
runs the ACP server ([`AcpAgent`][acpkit_core.server.AcpAgent]) around an adapter's
[`Runner`][acpkit_core.runner.protocols.Runner], and owns sessions, permissions, modes, commands and the
client's files and terminal. Names are imported lazily, so `import acpkit_core` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._sdk_schema import install as _lean_sdk_schema

_lean_sdk_schema()  # the ACP SDK's models are built when first used, not all at import

if TYPE_CHECKING:
    from .auth import Authentication
    from .cli.adapters import Adapter, load_adapters
    from .client.local_host import LocalClientHost
    from .config import AgentOptions, BooleanOption, Command, ConfigOption, ModelOption, SelectOption, SelectValue
    from .errors import (
        AcpKitError,
        AuthRequiredError,
        ConfigError,
        HostError,
        HostUnavailableError,
        InvalidCursorError,
        PathPolicyError,
        PromptError,
        RewindError,
        SessionBusyError,
        SessionNotFoundError,
        UserError,
        to_request_error,
    )
    from .extensions import ExtensionContext, Extensions
    from .permissions import STANDARD_MODES, EditHook, Mode, PermissionPolicy, RememberedPermissions, effective_decision
    from .prompt import context_wrapper, link_label, parse_prompt, prompt_text, resource_description
    from .prompt.ir import Binary, ContextRef, Link, Part, Prompt, Text
    from .runner.capabilities import CapabilityProvider, CommandSource, RunnerCapabilities
    from .runner.emitter import TurnEmitter
    from .runner.host import ClientHost, CommandResult
    from .runner.protocols import Emitter, McpLister, Runner, SessionDeleter, SessionHooks, ToolLister, Turn
    from .runner.rewind import RewindPoint, SessionRewinder
    from .runner.stop import stop_reason_from_finish
    from .runner.tool_classification import classify_tool, diff_content, tool_locations, tool_title
    from .runner.tool_presentation import ToolPresentation
    from .runner.tool_presets import TOOL_PRESETS
    from .runner.types import (
        ClientInfo,
        HistoryLog,
        HttpMcpServer,
        McpServer,
        McpServerStatus,
        PermissionDecision,
        PlanItem,
        Session,
        SseMcpServer,
        StdioMcpServer,
        StopReason,
        ToolInfo,
        ToolListing,
        ToolSource,
        TurnUsage,
    )
    from .server import AcpAgent, run_stdio, serve_stdio
    from .store import MemoryStore, SessionStore, SqliteStore, default_store_path
    from .telemetry import Telemetry
    from .thinking import (
        THINKING_LEVELS,
        THINKING_OPTION,
        ThinkingLevel,
        show_thinking_option,
        thinking_level,
        thinking_option,
    )

__all__ = [
    "STANDARD_MODES",
    "THINKING_LEVELS",
    "THINKING_OPTION",
    "TOOL_PRESETS",
    "AcpAgent",
    "AcpKitError",
    "Adapter",
    "AgentOptions",
    "AuthRequiredError",
    "Authentication",
    "Binary",
    "BooleanOption",
    "CapabilityProvider",
    "ClientHost",
    "ClientInfo",
    "Command",
    "CommandResult",
    "CommandSource",
    "ConfigError",
    "ConfigOption",
    "ContextRef",
    "EditHook",
    "Emitter",
    "ExtensionContext",
    "Extensions",
    "HistoryLog",
    "HostError",
    "HostUnavailableError",
    "HttpMcpServer",
    "InvalidCursorError",
    "Link",
    "LocalClientHost",
    "McpLister",
    "McpServer",
    "McpServerStatus",
    "MemoryStore",
    "Mode",
    "ModelOption",
    "Part",
    "PathPolicyError",
    "PermissionDecision",
    "PermissionPolicy",
    "PlanItem",
    "Prompt",
    "PromptError",
    "RememberedPermissions",
    "RewindError",
    "RewindPoint",
    "Runner",
    "RunnerCapabilities",
    "SelectOption",
    "SelectValue",
    "Session",
    "SessionBusyError",
    "SessionDeleter",
    "SessionHooks",
    "SessionNotFoundError",
    "SessionRewinder",
    "SessionStore",
    "SqliteStore",
    "SseMcpServer",
    "StdioMcpServer",
    "StopReason",
    "Telemetry",
    "Text",
    "ThinkingLevel",
    "ToolInfo",
    "ToolLister",
    "ToolListing",
    "ToolPresentation",
    "ToolSource",
    "Turn",
    "TurnEmitter",
    "TurnUsage",
    "UserError",
    "classify_tool",
    "context_wrapper",
    "default_store_path",
    "diff_content",
    "effective_decision",
    "link_label",
    "load_adapters",
    "parse_prompt",
    "prompt_text",
    "resource_description",
    "run_stdio",
    "serve_stdio",
    "show_thinking_option",
    "stop_reason_from_finish",
    "thinking_level",
    "thinking_option",
    "to_request_error",
    "tool_locations",
    "tool_title",
]

_HOMES: dict[str, str] = {
    **dict.fromkeys(["Adapter", "load_adapters"], "cli.adapters"),
    **dict.fromkeys(["Authentication"], "auth"),
    **dict.fromkeys(["CapabilityProvider", "CommandSource", "RunnerCapabilities"], "runner.capabilities"),
    **dict.fromkeys(["TurnEmitter"], "runner.emitter"),
    **dict.fromkeys(["Mode", "STANDARD_MODES"], "permissions"),
    **dict.fromkeys(
        ["AgentOptions", "BooleanOption", "Command", "ConfigOption", "ModelOption", "SelectOption", "SelectValue"],
        "config",
    ),
    **dict.fromkeys(
        [
            "AcpKitError",
            "AuthRequiredError",
            "ConfigError",
            "HostError",
            "HostUnavailableError",
            "InvalidCursorError",
            "PathPolicyError",
            "PromptError",
            "RewindError",
            "SessionBusyError",
            "SessionNotFoundError",
            "UserError",
            "to_request_error",
        ],
        "errors",
    ),
    **dict.fromkeys(["ExtensionContext", "Extensions"], "extensions"),
    **dict.fromkeys(["ClientHost", "CommandResult"], "runner.host"),
    **dict.fromkeys(["LocalClientHost"], "client.local_host"),
    **dict.fromkeys(["Binary", "ContextRef", "Link", "Part", "Prompt", "Text"], "prompt.ir"),
    **dict.fromkeys(["EditHook", "PermissionPolicy", "RememberedPermissions", "effective_decision"], "permissions"),
    **dict.fromkeys(["context_wrapper", "link_label", "parse_prompt", "prompt_text", "resource_description"], "prompt"),
    **dict.fromkeys(["RewindPoint", "SessionRewinder"], "runner.rewind"),
    **dict.fromkeys(
        [
            "ClientInfo",
            "HistoryLog",
            "HttpMcpServer",
            "McpServer",
            "McpServerStatus",
            "PermissionDecision",
            "PlanItem",
            "Session",
            "SseMcpServer",
            "StdioMcpServer",
            "StopReason",
            "ToolInfo",
            "ToolListing",
            "ToolSource",
            "TurnUsage",
        ],
        "runner.types",
    ),
    **dict.fromkeys(
        ["Emitter", "McpLister", "Runner", "SessionDeleter", "SessionHooks", "ToolLister", "Turn"], "runner.protocols"
    ),
    **dict.fromkeys(["TOOL_PRESETS"], "runner.tool_presets"),
    **dict.fromkeys(["ToolPresentation"], "runner.tool_presentation"),
    **dict.fromkeys(["AcpAgent", "run_stdio", "serve_stdio"], "server"),
    **dict.fromkeys(["stop_reason_from_finish"], "runner.stop"),
    **dict.fromkeys(["MemoryStore", "SessionStore", "SqliteStore", "default_store_path"], "store"),
    **dict.fromkeys(["Telemetry"], "telemetry"),
    **dict.fromkeys(
        [
            "THINKING_LEVELS",
            "THINKING_OPTION",
            "ThinkingLevel",
            "show_thinking_option",
            "thinking_level",
            "thinking_option",
        ],
        "thinking",
    ),
    **dict.fromkeys(["classify_tool", "diff_content", "tool_locations", "tool_title"], "runner.tool_classification"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'acpkit_core' has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
