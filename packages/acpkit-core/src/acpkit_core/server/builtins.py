"""The built-in slash commands `/mode`, `/model`, `/thinking`, `/clear`, `/tools`, `/mcp`, `/rewind` and `/retry`."""

from __future__ import annotations

import logging

from ..config import SelectOption
from ..errors import RewindError
from ..prompt.ir import Prompt, Text
from ..runner.protocols import McpLister, Runner, ToolLister, Turn
from ..runner.types import StopReason
from ..thinking import THINKING_OPTION
from .mcp_listing import mcp_text
from .rewinding import FileQuestion, Rewinder, RewindResult, parse_prompt_number
from .session_manager import SessionManager
from .tool_listing import tools_text
from .turn import ServerTurn

__all__ = ["BuiltinCommands"]

logger = logging.getLogger("acpkit_core.server")


class BuiltinCommands:
    """Handlers of the built-in commands, over the connection's sessions."""

    def __init__(self, runner: Runner, sessions: SessionManager, rewinder: Rewinder) -> None:
        self.runner = runner
        self.sessions = sessions
        self.rewinder = rewinder

    @property
    def has_modes(self) -> bool:
        """True when the agent offers modes (`/mode`)."""
        return bool(self.sessions.session_options.modes)

    @property
    def has_models(self) -> bool:
        """True when the agent offers models (`/model`)."""
        return bool(self.sessions.session_options.models)

    @property
    def thinking(self) -> SelectOption | None:
        """The `thinking` option, when the agent offers it (`/thinking`)."""
        for option in self.sessions.session_options.custom:
            if option.id == THINKING_OPTION and isinstance(option, SelectOption):
                return option
        return None

    async def command_thinking(self, turn: Turn, args: str) -> StopReason | None:
        """`/thinking [level]`."""
        option = self.thinking
        assert option is not None
        live = await self.sessions.live(turn.session.id)
        levels = [v.value for v in option.values]
        current = live.session.config.get(THINKING_OPTION, option.default)
        if not args:
            listing = ", ".join(f"{v}{' (current)' if v == current else ''}" for v in levels)
            await turn.emit.text(f"Thinking: {listing}")
            return "end_turn"
        if args not in levels:
            await turn.emit.text(f"Unknown thinking level {args!r}. Levels: {', '.join(levels)}")
            return "end_turn"
        self.sessions.session_options.set_option(live.session, THINKING_OPTION, args, self.sessions.client)
        await self.sessions.send_options(live.session)
        await turn.emit.text(f"Thinking: {args}")
        return "end_turn"

    async def command_mode(self, turn: Turn, args: str) -> StopReason | None:
        """`/mode [id]`."""
        live = await self.sessions.live(turn.session.id)
        modes = self.sessions.session_options.modes
        if not args:
            listing = ", ".join(f"{m.id}{' (current)' if m.id == live.session.mode_id else ''}" for m in modes)
            await turn.emit.text(f"Modes: {listing}")
            return "end_turn"
        if args not in {m.id for m in modes}:
            await turn.emit.text(f"Unknown mode {args!r}. Modes: {', '.join(m.id for m in modes)}")
            return "end_turn"
        await self.sessions.apply_mode(live, args)
        await turn.emit.text(f"Mode: {args}")
        return "end_turn"

    async def command_model(self, turn: Turn, args: str) -> StopReason | None:
        """`/model [id]` lists or switches the session's model; `/model <id> <prompt>` runs the prompt
        with that model, for this turn only."""
        live = await self.sessions.live(turn.session.id)
        models = self.sessions.session_options.models
        current = live.session.config.get("model")
        if not args:
            listing = ", ".join(f"{m.id}{' (current)' if m.id == current else ''}" for m in models)
            await turn.emit.text(f"Models: {listing}")
            return "end_turn"
        parts = args.split(maxsplit=1)
        if parts[0] not in {m.id for m in models}:
            await turn.emit.text(f"Unknown model {parts[0]!r}. Models: {', '.join(m.id for m in models)}")
            return "end_turn"
        if len(parts) == 2 and isinstance(turn, ServerTurn):
            return await self._run_with_model(turn, parts[0], parts[1])
        self.sessions.session_options.set_option(live.session, "model", args, self.sessions.client)
        await self.sessions.send_options(live.session)
        await turn.emit.text(f"Model: {args}")
        return "end_turn"

    async def _run_with_model(self, turn: ServerTurn, model: str, text: str) -> StopReason | None:
        """Hand the rest of the prompt (its text after `/model <id>`, and its other blocks) to the
        runner, with `model` for this turn; the session's model stays as it was."""
        first = turn.prompt[0]
        assert isinstance(first, Text)  # `match_command` only matches a prompt that starts with text
        rest = Text(text=text, annotations=first.annotations, meta=first.meta)
        turn.run_as(Prompt((rest, *turn.prompt.parts[1:])), model=model)
        turn.emit.context_window = self.sessions.session_options.context_window(turn.session, model)
        return await self.runner.run_turn(turn)

    async def command_clear(self, turn: Turn, args: str) -> StopReason | None:
        """`/clear`: forget the runner state, remembered permissions and transcript."""
        live = await self.sessions.live(turn.session.id)
        live.session.state.clear()
        live.session.history.clear()
        live.server.pop("permissions", None)
        if self.sessions.options.plan_provider is None:
            await turn.plan.clear()  # the client stops showing it; a host's plan is the host's to clear
        if isinstance(turn, ServerTurn):
            turn.remembered = turn.remembered.forget()
            turn.emit.recorded.clear()
        live.reset_transcript = True
        live.prompts = []  # the store drops their marks with the transcript
        await turn.emit.text("Conversation cleared.")
        if isinstance(turn, ServerTurn):
            turn.emit.recorded.clear()
        return "end_turn"

    async def command_tools(self, turn: Turn, args: str) -> StopReason | None:
        """`/tools`: every tool the model can call in this session, with its kind and status in the current mode."""
        if not isinstance(self.runner, ToolLister):
            await turn.emit.text("This agent does not list its tools.")
            return "end_turn"
        live = await self.sessions.live(turn.session.id)
        try:
            listing = await self.runner.list_tools(turn)
        except Exception as error:  # the runner's failure is told to the user, the session goes on
            logger.exception("list_tools failed")
            await turn.emit.text(f"Could not list the tools: {error or type(error).__name__}")
            return "end_turn"
        await turn.emit.text(tools_text(listing, turn, self.sessions.session_options.mode(live.session)))
        return "end_turn"

    async def command_mcp(self, turn: Turn, args: str) -> StopReason | None:
        """`/mcp`: the session's MCP servers, whether each is connected (or why not) and its tools."""
        servers = turn.session.mcp_servers
        assert isinstance(self.runner, McpLister)  # `/mcp` is offered only then
        try:
            statuses = await self.runner.list_mcp_servers(turn) if servers else ()
        except Exception as error:  # the runner's failure is told to the user, the session goes on
            logger.exception("list_mcp_servers failed")
            await turn.emit.text(f"Could not list the MCP servers: {error or type(error).__name__}")
            return "end_turn"
        await turn.emit.text(mcp_text(servers, statuses))
        return "end_turn"

    async def _rewind(self, turn: Turn, args: str) -> RewindResult | None:
        """Rewind the turn's session as `/rewind args` says; `None` (and the reason said) when it cannot."""
        live = await self.sessions.live(turn.session.id)
        ask: FileQuestion | None = None
        commit = None
        if isinstance(turn, ServerTurn):
            ask = turn.elicitor.confirm
            recorder = turn.recorder
            commit = recorder.detach if recorder is not None else None
        try:
            number = parse_prompt_number(args)
            return await self.rewinder.rewind(live, number=number, files="ask", ask=ask, commit=commit)
        except RewindError as error:
            if not turn.cancelled:
                await turn.emit.text(f"Cannot rewind: {error}")
            return None

    async def command_rewind(self, turn: Turn, args: str) -> StopReason | None:
        """`/rewind [N]`: back to before prompt N (the last prompt by default), files included."""
        result = await self._rewind(turn, args)
        if result is None:
            return "cancelled" if turn.cancelled else "end_turn"
        await turn.emit.text(result.text())
        await self._send_commands(turn)
        return "end_turn"

    async def command_retry(self, turn: Turn, args: str) -> StopReason | None:
        """`/retry`: undo the last prompt's turn and send the prompt again."""
        if args.strip():
            await turn.emit.text(
                "/retry takes no argument: it sends the last prompt again (/rewind N goes further back)"
            )
            return "end_turn"
        result = await self._rewind(turn, "")
        if result is None:
            return "cancelled" if turn.cancelled else "end_turn"
        live = await self.sessions.live(turn.session.id)
        live.retry = result.blocks
        turn.emit.new_message()
        await turn.emit.text(result.text() + f"\nSending prompt {result.number} again.")
        turn.emit.new_message()
        return "end_turn"

    async def _send_commands(self, turn: Turn) -> None:
        if isinstance(turn, ServerTurn) and turn.commands_update is not None:
            await turn.emit.send_unrecorded(await turn.commands_update())
