"""Modes, config options and slash commands, as the client sees them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from acp import RequestError
from acp.schema import (
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    UsageUpdate,
)
from acpkit_core.config import AgentOptions, BooleanOption, Command, ModelOption, SelectOption, SelectValue
from acpkit_core.errors import UserError
from acpkit_core.permissions import STANDARD_MODES
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason, ToolInfo
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner
from acpkit_core.thinking import show_thinking_option


class ModeAwareRunner(ScriptedRunner):
    """Says the mode, the model, and whether `delete_file` is allowed / needs asking."""

    async def run_turn(self, turn: Turn) -> StopReason:
        from acpkit_core.prompt.ir import Text

        text = "".join(p.text for p in turn.prompt if isinstance(p, Text))
        if text == "status":
            kind = turn.classify_tool("delete_file")
            await turn.emit.text(
                f"mode={turn.session.mode_id} model={turn.model_id} verbose={turn.session.config.get('verbose')} "
                f"allowed={turn.tool_allowed('delete_file', kind)} ask={turn.needs_permission('delete_file', kind)} "
                f"plan_only={turn.plan_only}"
            )
            return "end_turn"
        return await super().run_turn(turn)

    async def list_tools(self, turn: Turn) -> Sequence[ToolInfo]:
        return [ToolInfo(name="read_file", description="Read a file", kind="read"), ToolInfo(name="bash")]


async def shout(turn: Turn, args: str) -> StopReason | None:
    await turn.emit.text(args.upper())
    return None


def full_options() -> AgentOptions:
    return AgentOptions(
        store="memory",
        modes=STANDARD_MODES,
        default_mode="interactive",
        models=[ModelOption(id="fast", name="Fast"), ModelOption(id="smart")],
        config_options=[
            SelectOption(
                id="tone",
                name="Tone",
                values=[SelectValue(value="dry", name="Dry"), SelectValue(value="warm", name="Warm")],
                default="dry",
            ),
            BooleanOption(id="verbose", name="Verbose", default=False),
        ],
        commands=[Command(name="shout", description="Shout it", handler=shout, hint="text")],
    )


def option_ids(options: Sequence[object] | None) -> list[str]:
    return [getattr(o, "id", "") for o in options or []]


async def test_new_session_offers_modes_models_and_options() -> None:
    async with AcpTestClient.connect(AcpAgent(ModeAwareRunner(), full_options())) as c:
        await c.initialize()
        sid = await c.new_session()
        new = c.last_session
        assert new is not None and new.modes is not None
        assert new.modes.current_mode_id == "interactive"
        assert [m.id for m in new.modes.available_modes] == ["agentic", "interactive", "readonly", "planning"]
        assert option_ids(new.config_options) == ["mode", "model", "tone"]  # no boolean: client did not advertise
        mode, model, _ = new.config_options or []
        assert (
            isinstance(mode, SessionConfigOptionSelect)
            and mode.category == "mode"
            and mode.current_value == "interactive"
        )
        assert (
            isinstance(model, SessionConfigOptionSelect) and model.category == "model" and model.current_value == "fast"
        )
        r = await c.prompt("status", session_id=sid)
    assert r.text == "mode=interactive model=fast verbose=False allowed=True ask=True plan_only=False"


async def test_set_mode_and_mode_option_stay_in_sync() -> None:
    async with AcpTestClient.connect(AcpAgent(ModeAwareRunner(), full_options())) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.set_mode(sid, "readonly")
        updates = c.updates[sid][-2:]
        assert isinstance(updates[0], CurrentModeUpdate) and updates[0].current_mode_id == "readonly"
        assert isinstance(updates[1], ConfigOptionUpdate)
        assert updates[1].config_options[0].current_value == "readonly"  # type: ignore[union-attr]
        r = await c.prompt("status", session_id=sid)
        assert "mode=readonly" in r.text and "allowed=False" in r.text
        response = await c.set_config_option(sid, "mode", "planning")
        assert option_ids(response.config_options) == ["mode", "model", "tone"]
        last = c.updates[sid][-1]
        assert isinstance(last, CurrentModeUpdate) and last.current_mode_id == "planning"
        r = await c.prompt("status", session_id=sid)
        assert "plan_only=True" in r.text
        model = await c.set_config_option(sid, "model", "smart")
        assert model.config_options[1].current_value == "smart"  # type: ignore[union-attr]
        r = await c.prompt("status", session_id=sid)
        assert "model=smart" in r.text
        _, _ = await c.load_session(sid)
        assert c.updates[sid][-1].session_update == "available_commands_update"


@pytest.mark.parametrize(
    ("config_id", "value", "message"),
    [
        ("nope", "x", "unknown config option 'nope'"),
        ("mode", "flying", "unknown mode 'flying'"),
        ("model", "gpt-99", "unknown model 'gpt-99'"),
        ("tone", "angry", "unknown value 'angry'"),
        ("verbose", True, "unknown config option 'verbose'"),  # boolean not offered to this client
    ],
)
async def test_bad_config_values_are_invalid_params(config_id: str, value: str | bool, message: str) -> None:
    async with AcpTestClient.connect(AcpAgent(ModeAwareRunner(), full_options())) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError) as info:
            await c.set_config_option(sid, config_id, value)
        with pytest.raises(RequestError) as mode_info:
            await c.set_mode(sid, "flying")
    assert info.value.code == -32602 and message in str(info.value)
    assert mode_info.value.code == -32602


async def test_boolean_options_for_clients_that_support_them() -> None:
    async with AcpTestClient.connect(AcpAgent(ModeAwareRunner(), full_options()), boolean_options=True) as c:
        await c.initialize()
        sid = await c.new_session()
        assert option_ids(c.last_session.config_options if c.last_session else None) == [
            "mode",
            "model",
            "tone",
            "verbose",
        ]
        response = await c.set_config_option(sid, "verbose", True)
        verbose = response.config_options[-1]
        assert isinstance(verbose, SessionConfigOptionBoolean) and verbose.current_value is True
        r = await c.prompt("status", session_id=sid)
        with pytest.raises(RequestError):
            await c.set_config_option(sid, "verbose", "yes")
    assert "verbose=True" in r.text


async def test_show_thinking_off_keeps_reasoning_out_of_the_client_and_the_transcript() -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", config_options=[show_thinking_option()]))
    async with AcpTestClient.connect(agent, boolean_options=True) as c:
        await c.initialize()
        sid = await c.new_session()
        shown = await c.prompt("think hmm\nsay done", session_id=sid)
        options = await c.set_config_option(sid, "show_thinking", False)
        hidden = await c.prompt("think secret\nsay done", session_id=sid)
        _, replayed = await c.load_session(sid)
    (switch,) = options.config_options
    assert isinstance(switch, SessionConfigOptionBoolean) and switch.current_value is False
    assert shown.thoughts == "hmm" and hidden.thoughts == ""
    assert hidden.kinds == ["agent_message_chunk", "available_commands_update"] and hidden.text == "done"
    thoughts = [u.content.text for u in replayed if u.session_update == "agent_thought_chunk"]
    assert thoughts == ["hmm"]  # the hidden reasoning was not kept either


async def test_a_client_without_boolean_options_is_not_offered_show_thinking_and_sees_reasoning() -> None:
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", config_options=[show_thinking_option()]))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("think hmm\nsay done", session_id=sid)
        with pytest.raises(RequestError) as refused:
            await c.set_config_option(sid, "show_thinking", False)
    assert c.last_session is not None and c.last_session.config_options is None
    assert r.thoughts == "hmm"
    assert refused.value.code == -32602 and "unknown config option 'show_thinking'" in str(refused.value)


def test_misconfigured_options_are_user_errors() -> None:
    with pytest.raises(UserError, match="default_mode"):
        AcpAgent(ScriptedRunner(), AgentOptions(store="memory", modes=STANDARD_MODES, default_mode="x"))
    with pytest.raises(UserError, match="default_model"):
        AcpAgent(ScriptedRunner(), AgentOptions(store="memory", models=[ModelOption(id="a")], default_model="b"))
    with pytest.raises(UserError, match="config_options"):
        AcpAgent(ScriptedRunner(), AgentOptions(store="memory", config_options=[BooleanOption(id="mode", name="m")]))


# --- commands -----------------------------------------------------------------------------------


async def test_available_commands_and_builtins() -> None:
    async with AcpTestClient.connect(AcpAgent(ModeAwareRunner(), full_options())) as c:
        await c.initialize()
        sid = await c.new_session()
        (first,) = c.updates[sid]
        assert isinstance(first, AvailableCommandsUpdate)
        names = [cmd.name for cmd in first.available_commands]
        assert names == ["mode", "model", "clear", "tools", "rewind", "retry", "shout"]
        hints = {cmd.name: cmd.input.root.hint if cmd.input else None for cmd in first.available_commands}
        assert hints["shout"] == "text" and hints["clear"] is None

        r = await c.prompt("/mode readonly", session_id=sid)
        assert r.text == "Mode: readonly"
        assert "current_mode_update" in r.kinds and "config_option_update" in r.kinds
        assert "mode=readonly" in (await c.prompt("status", session_id=sid)).text
        assert (await c.prompt("/mode", session_id=sid)).text.startswith(
            "Modes: agentic, interactive, readonly (current)"
        )
        assert (await c.prompt("/mode nope", session_id=sid)).text.startswith("Unknown mode 'nope'")
        assert (await c.prompt("/model smart", session_id=sid)).text == "Model: smart"
        assert "model=smart" in (await c.prompt("status", session_id=sid)).text
        tools = await c.prompt("/tools", session_id=sid)
        assert tools.text == (  # kinds classified by core when the runner gives none; the mode's status
            "Tools the model can call in mode readonly: 2 tools, 1 usable.\n"
            "\n"
            "Agent tools:\n"
            "- `bash` (execute) — off in mode readonly\n"
            "- `read_file` (read) — allowed — Read a file"
        )
        assert (await c.prompt("/shout hello there", session_id=sid)).text == "HELLO THERE"
        plain = await c.prompt("/unknown stuff", session_id=sid)
        assert plain.text == "echo: /unknown stuff"


async def test_clear_resets_state_and_transcript() -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        await c.prompt("say before", session_id=sid)
        cleared = await c.prompt("/clear", session_id=sid)
        after = await c.prompt("history", session_id=sid)
        _, replayed = await c.load_session(sid)
    assert cleared.text == "Conversation cleared."
    assert after.text == "(no history)"
    assert [u.session_update for u in replayed] == [
        "user_message_chunk",
        "agent_message_chunk",
        "available_commands_update",
    ]


class CommandRunner(ScriptedRunner):
    def commands(self) -> Sequence[Command]:
        async def ping(turn: Turn, args: str) -> StopReason | None:
            await turn.emit.text("pong")
            return "end_turn"

        return [Command(name="ping", description="Ping", handler=ping)]


async def test_runner_commands_and_no_mode_commands_without_modes() -> None:
    async with AcpTestClient.connect(AcpAgent(CommandRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        (first,) = c.updates[sid]
        assert isinstance(first, AvailableCommandsUpdate)
        assert [cmd.name for cmd in first.available_commands] == ["clear", "rewind", "retry", "ping"]
        r = await c.prompt("/ping", session_id=sid)
        plain = await c.prompt("/mode readonly", session_id=sid)
    assert r.text == "pong"
    assert plain.text == "echo: /mode readonly"


async def test_usage_update_takes_the_context_window_of_the_chosen_model() -> None:
    """A runner that reports tokens but no context size still gets `usage_update`s: the developer's window."""
    models = [ModelOption(id="fast"), ModelOption(id="wide", context_window=200_000)]
    agent = AcpAgent(ScriptedRunner(), AgentOptions(store="memory", models=models, context_window=8_000))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        sid = await c.new_session()
        fast = await c.prompt("usage 100 20", session_id=sid)
        await c.set_config_option(sid, "model", "wide")
        wide = await c.prompt("usage 300 40\nusage 50 5 1000", session_id=sid)
    assert [(u.used, u.size) for u in fast.updates if isinstance(u, UsageUpdate)] == [(120, 8_000)]
    # the runner's own size, when it gives one, wins
    assert [(u.used, u.size) for u in wide.updates if isinstance(u, UsageUpdate)] == [(340, 200_000), (55, 1000)]
    assert wide.usage is not None and (wide.usage.input_tokens, wide.usage.output_tokens) == (350, 45)


async def test_no_usage_update_without_any_context_window() -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("usage 100 20", session_id=sid)
    assert not any(isinstance(u, UsageUpdate) for u in r.updates)
    assert r.usage is not None and r.usage.total_tokens == 120
