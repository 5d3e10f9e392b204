"""An `acpkit serve` target for the replica tests: the core server over `ScriptedRunner`.

Its store comes from `$REPLICA_STORE` (a SQLite path, or a database URL), so two processes share it.
Every word it says is a chunk of its own (`coalesce_ms=0`): the remote tests count messages and frames.
"""

from __future__ import annotations

import os

from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent
from acpkit_core.testing import ScriptedRunner

agent = AcpAgent(
    ScriptedRunner(chunk_delay=float(os.environ.get("REPLICA_CHUNK_DELAY", "0"))),
    AgentOptions(name="replica", store=os.environ["REPLICA_STORE"], coalesce_ms=0),
)
