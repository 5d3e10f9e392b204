"""An `acpkit serve` target whose sessions take `$OPEN_SECONDS` to open (the scripted runner otherwise).

A request that takes a while leaves room for the connection to drop between the request's
acceptance and its answer. The store is `$REPLICA_STORE`.
"""

from __future__ import annotations

import asyncio
import os

from acpkit_core.config import AgentOptions
from acpkit_core.runner.types import Session
from acpkit_core.server import AcpAgent
from acpkit_core.testing import ScriptedRunner


class SlowOpenRunner(ScriptedRunner):
    """The scripted runner, with a slow `open_session` hook."""

    async def open_session(self, session: Session) -> None:
        await asyncio.sleep(float(os.environ.get("OPEN_SECONDS", "1")))

    async def close_session(self, session: Session) -> None:
        return None


agent = AcpAgent(SlowOpenRunner(), AgentOptions(name="slow-open", store=os.environ["REPLICA_STORE"]))
