r"""`ScriptedRunner`: a runner that does what the prompt tells it, for testing servers and clients.

Each line of the prompt's text is one step:

| line | what the runner does |
|---|---|
| `say <text>` | streams `<text>` as agent message chunks (one per word) |
| `think <text>` | streams `<text>` as thought chunks |
| `tool <name> ok\|fail\|open [json args]` | a tool call, closed `completed`, `failed`, or left open |
| `ask <name> [json args]` | a tool call that asks permission first; runs if allowed, fails if rejected |
| `question {"text": ..., "choices": [...]}` | a tool call asking `turn.ask`; says `answer: <outcome> [value]` |
| `question {"text": ..., "url": ..., "complete": true}` | a link question: `answer: answered <id>` (completed) |
| `sleep <seconds>` | waits (a cancel interrupts it) |
| `plan <a> \| <b> \| ...` | sends a plan (first item in progress) |
| `showplan <id> <a> \| <b>` (or `md <markdown>`, `file <uri>` after the id) | shows another plan (`turn.plan.show`) |
| `dropplan <id>` / `clearplan` | takes another plan away / clears the session's plan |
| `notice <severity> <title> [\| <description>]` | sends a notice (`turn.emit.notice`) |
| `compact [<summary>]` | a compaction (`turn.emit.compaction`: in progress, summary streamed word by word, done) |
| `usage <input> <output> [context size] [model=<name>]` | reports token usage (of a named model) |
| `fail <message>` | raises `RuntimeError(message)` |
| `read <path>` / `write <path> <text>` / `run [timeout=<s>] <command> [args]` | uses the client's files or terminal |
| `history` | says every earlier prompt of this session (kept in `session.state`) |

Any other prompt is answered `echo: <text>`. The runner keeps the prompts of the session in
`session.state["history"]`, so a test can check that state survives a restart.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from collections.abc import Mapping
from typing import Any, cast

from ..prompt.ir import Text
from ..runner.protocols import Turn
from ..runner.types import PlanItem, StopReason, TurnUsage

__all__ = ["ScriptedRunner"]


def _args(raw: str) -> Mapping[str, Any] | None:
    raw = raw.strip()
    if not raw:
        return None
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("tool arguments must be a JSON object")
    return cast(dict[str, Any], value)


class ScriptedRunner:
    """A [`Runner`][acpkit_core.runner.protocols.Runner] driven by a small line-based script in the prompt."""

    def __init__(self, *, chunk_delay: float = 0.0) -> None:
        self.chunk_delay = chunk_delay
        """Seconds to wait between streamed words (to make cancellation observable)."""
        self.turns = 0
        """Turns run by this instance."""

    async def run_turn(self, turn: Turn) -> StopReason:
        """Run the script in the prompt."""
        self.turns += 1
        text = "\n".join(p.text for p in turn.prompt if isinstance(p, Text))
        history: list[str] = turn.session.state.setdefault("history", [])
        before = list(history)
        history.append(text)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        verbs = {
            "say",
            "think",
            "tool",
            "ask",
            "question",
            "sleep",
            "plan",
            "usage",
            "fail",
            "read",
            "write",
            "run",
            "history",
            "showplan",
            "dropplan",
            "clearplan",
            "notice",
            "compact",
        }
        if not lines or lines[0].split(" ", 1)[0] not in verbs:
            await self._say(turn, f"echo: {text}")
            return "end_turn"
        for n, line in enumerate(lines):
            verb, _, rest = line.partition(" ")
            stop = await self._step(turn, f"call-{len(before)}-{n}", verb, rest, before)
            if stop is not None:
                return stop
        return "end_turn"

    async def _say(self, turn: Turn, text: str, *, thought: bool = False) -> None:
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            if thought:
                await turn.emit.thought(piece)
            else:
                await turn.emit.text(piece)
            if self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)

    async def _step(self, turn: Turn, call_id: str, verb: str, rest: str, before: list[str]) -> StopReason | None:
        if verb == "say":
            await self._say(turn, rest)
        elif verb == "think":
            await self._say(turn, rest, thought=True)
        elif verb == "tool":
            name, _, tail = rest.partition(" ")
            outcome, _, raw = tail.partition(" ")
            await self._tool(turn, call_id, name, outcome or "ok", _args(raw))
        elif verb == "ask":
            name, _, raw = rest.partition(" ")
            return await self._ask(turn, call_id, name, _args(raw))
        elif verb == "question":
            return await self._question(turn, call_id, _args(rest) or {})
        elif verb == "sleep":
            await asyncio.sleep(float(rest or "1"))
        elif verb == "plan":
            items = [s.strip() for s in rest.split("|") if s.strip()]
            await turn.emit.plan(
                [PlanItem(content=c, status="in_progress" if i == 0 else "pending") for i, c in enumerate(items)]
            )
        elif verb == "showplan":
            plan_id, _, body = rest.partition(" ")
            form, _, tail = body.partition(" ")
            if form == "md":
                await turn.plan.show(plan_id, markdown=tail.replace("\\n", "\n"))
            elif form == "file":
                await turn.plan.show(plan_id, uri=tail)
            else:
                await turn.plan.show(plan_id, items=[PlanItem(content=c.strip()) for c in body.split("|") if c.strip()])
        elif verb == "dropplan":
            await turn.plan.drop(rest.strip())
        elif verb == "clearplan":
            await turn.plan.clear()
        elif verb == "notice":
            severity, _, tail = rest.partition(" ")
            title, _, description = tail.partition("|")
            await turn.emit.notice(title.strip(), description=description.strip() or None, severity=cast(Any, severity))
        elif verb == "compact":
            cid = await turn.emit.compaction(status="in_progress")
            for word in re.findall(r"\S+\s*", rest.strip()):  # the summary streams, a word at a time
                await turn.emit.compaction_summary(cid, word)
            await turn.emit.compaction(status="completed", compaction_id=cid, summary=rest.strip() or None, removed=2)
        elif verb == "usage":
            words = rest.split()
            model = next((w.removeprefix("model=") for w in words if w.startswith("model=")), None)
            nums = [int(x) for x in words if not x.startswith("model=")]
            size = nums[2] if len(nums) > 2 else None
            usage = TurnUsage(input_tokens=nums[0], output_tokens=nums[1], context_size=size, model=model)
            await turn.emit.usage(usage)
        elif verb == "fail":
            raise RuntimeError(rest or "scripted failure")
        elif verb == "read":
            await self._say(turn, await turn.host.read_text_file(rest.strip()))
        elif verb == "write":
            path, _, content = rest.partition(" ")
            await turn.host.write_text_file(path, content)
            await self._say(turn, f"wrote {path}")
        elif verb == "run":
            parts = shlex.split(rest)
            timeout = 30.0
            if parts and parts[0].startswith("timeout="):
                timeout = float(parts.pop(0).removeprefix("timeout="))
            result = await turn.host.run(parts[0], parts[1:], timeout=timeout)
            await self._say(turn, f"exit {result.exit_code}: {result.output.strip()}")
        elif verb == "history":
            await self._say(turn, " | ".join(before) if before else "(no history)")
        return None

    async def _tool(self, turn: Turn, call_id: str, name: str, outcome: str, args: Mapping[str, Any] | None) -> None:
        kind = turn.classify_tool(name, args)
        await turn.emit.tool_call(
            call_id,
            title=name,
            kind=kind,
            status="pending",
            raw_input=dict(args) if args else None,
            locations=turn.tool_locations(args),
            name=name,
        )
        await turn.emit.tool_call_update(call_id, status="in_progress")
        if self.chunk_delay:
            await asyncio.sleep(self.chunk_delay)
        if outcome == "ok":
            await turn.emit.tool_call_update(call_id, status="completed", raw_output=f"{name} done")
        elif outcome == "fail":
            await turn.emit.tool_call_update(call_id, status="failed", raw_output=f"{name} failed")

    async def _ask(self, turn: Turn, call_id: str, name: str, args: Mapping[str, Any] | None) -> StopReason | None:
        kind = turn.classify_tool(name, args)
        raw = dict(args) if args else None
        await turn.emit.tool_call(call_id, title=name, kind=kind, status="pending", raw_input=raw)
        decision = await turn.request_permission(call_id, tool_name=name, title=name, kind=kind, raw_input=raw)
        if decision.outcome == "cancelled":
            await turn.emit.tool_call_update(call_id, status="failed", raw_output="cancelled")
            return "cancelled"
        if not decision.allowed:
            await turn.emit.tool_call_update(call_id, status="failed", raw_output="rejected by the user")
            return None
        await turn.emit.tool_call_update(call_id, status="in_progress")
        await turn.emit.tool_call_update(call_id, status="completed", raw_output=f"{name} done")
        return None

    async def _question(self, turn: Turn, call_id: str, args: Mapping[str, Any]) -> StopReason | None:
        await turn.emit.tool_call(call_id, title="question", kind="other", status="in_progress", raw_input=dict(args))
        answer = await turn.ask(
            str(args.get("text", "")),
            choices=args.get("choices"),
            default=args.get("default"),
            tool_call_id=call_id,
            url=args.get("url"),
        )
        said = f"answer: {answer.outcome}" + (f" {answer.value}" if answer.value is not None else "")
        if answer.elicitation_id is not None:
            said += f" {answer.elicitation_id}"
            if args.get("complete"):
                await turn.complete_url(answer.elicitation_id)
        await turn.emit.tool_call_update(call_id, status="completed" if answer.answered else "failed", raw_output=said)
        if answer.outcome == "cancelled":
            return "cancelled"
        await self._say(turn, said)
        return None
