"""Over real stdio, for both adapters: a chunk reaches the client as the model makes it, even from
a model that never hands control back while it streams (a local model computing in place, a
provider's burst of chunks read from one buffer). The model blocks after its first chunk until the
client has read it; the second chunk says whether it had."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import pytest
from acp.schema import AgentMessageChunk
from acpkit_core.testing import AcpTestClient

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

TESTS = Path(__file__).resolve().parents[1]
APPS = {"pydantic": TESTS / "pydantic" / "pyd_eager_app.py", "langchain": TESTS / "langchain" / "lc_eager_app.py"}


class MarkingClient(AcpTestClient):
    """Writes `mark` once it has read the first text chunk."""

    mark: Path

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if isinstance(update, AgentMessageChunk):
            self.mark.touch()


@pytest.mark.parametrize("adapter", sorted(APPS))
async def test_the_first_chunk_is_read_while_the_model_still_holds_the_agent(adapter: str, tmp_path: Path) -> None:
    mark = tmp_path / "read-the-first-chunk"
    env = {"EAGER_MARK": str(mark)}
    async with MarkingClient.spawn(sys.executable, str(APPS[adapter]), root=tmp_path, env=env) as client:
        c = cast(MarkingClient, client)
        c.mark = mark
        await c.initialize()
        sid = await c.new_session()
        r = await c.prompt("Go.", session_id=sid)
    assert r.text == "first second"
    assert r.stop_reason == "end_turn"
