"""An `acpkit serve` target that streams big chunks: `flood N SIZE` sends N text chunks of SIZE bytes.

Any other prompt runs as the scripted runner's (`say`, `sleep`, ...). The store is `$REPLICA_STORE`.
"""

from __future__ import annotations

import os

from acpkit_core.config import AgentOptions
from acpkit_core.prompt.ir import Text
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent
from acpkit_core.testing import ScriptedRunner


class FloodRunner(ScriptedRunner):
    """The scripted runner, plus `flood N SIZE`."""

    async def run_turn(self, turn: Turn) -> StopReason:
        text = "".join(p.text for p in turn.prompt if isinstance(p, Text)).strip()
        verb, _, rest = text.partition(" ")
        if verb != "flood":
            return await super().run_turn(turn)
        count, size = (int(x) for x in rest.split())
        for i in range(count):
            await turn.emit.text(f"{i:08d}".ljust(size, "x"))
        return "end_turn"


# Every chunk its own message (`coalesce_ms=0`): the worst case for what a stalled turn keeps, which the
# memory bound must cover (merged, a million 1-byte chunks would be a few dozen messages).
agent = AcpAgent(FloodRunner(), AgentOptions(name="flood", store=os.environ["REPLICA_STORE"], coalesce_ms=0))
