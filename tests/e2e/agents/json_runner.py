"""A remote ACP agent that knows nothing of ACP Kit's `_meta`: it answers in text, as another vendor's agent would.

Built on core's runner contract only. It answers a prompt that mentions Paris with a JSON object
in a code fence; a prompt that mentions Atlantis first with prose (which no schema accepts), then,
once told what was wrong (the next prompt of that session), with the JSON.
"""

from __future__ import annotations

from acpkit_core.config import AgentOptions
from acpkit_core.prompt import prompt_text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent, run_stdio


class JsonRunner:
    """Answers in text only; ignores what the prompt's `_meta` asks for."""

    def __init__(self) -> None:
        self.refused: set[str] = set()

    async def run_turn(self, turn: Turn) -> StopReason:
        text = prompt_text(turn.prompt)
        if "Paris" in text:
            await turn.emit.text('Here it is:\n```json\n{"name": "Paris", "population": 2102650}\n```')
        elif turn.session.id in self.refused:  # told what was wrong with its answer: the JSON, this time
            self.refused.discard(turn.session.id)
            await turn.emit.text('{"name": "Atlantis", "population": 0}')
        elif "Atlantis" in text:
            self.refused.add(turn.session.id)
            await turn.emit.text("Nobody knows how many people live in Atlantis.")
        else:
            await turn.emit.text("I answer questions about cities.")
        return "end_turn"


if __name__ == "__main__":
    run_stdio(AcpAgent(JsonRunner(), AgentOptions(name="json-runner", store="memory")))
