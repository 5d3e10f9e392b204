"""One model id scheme for both examples: the ids their docstrings name are the ones they offer.

`acpx set model <id>` sets the `model` config option; `/model <id>` does the same from the prompt.
Both work with the ids each example's docstring gives, on both examples.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from acpkit_core.testing import AcpTestClient
from wire_client import EXAMPLES

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

OFFLINE = {"ACPKIT_MODEL": ""}
IDS = ["offline-planner", "offline-summariser"]
SUMMARY = {
    "pydantic_agent.py": "Summary of `README.md`: 2 lines, starting with '# My project'.",
    "langgraph_agent.py": "Summary of README.md: 2 lines, starting with '# My project'.",
}


@pytest.mark.parametrize("example", sorted(SUMMARY))
def test_the_docstring_names_the_ids_the_example_offers(example: str) -> None:
    doc = ast.get_docstring(ast.parse((EXAMPLES / example).read_text())) or ""
    for model_id in IDS:
        assert f"`{model_id}`" in doc
    assert "function:" not in doc
    assert "acpx set model offline-summariser" in doc


@pytest.mark.parametrize("example", sorted(SUMMARY))
@pytest.mark.parametrize("how", ["config option", "slash command"])
async def test_the_second_model_is_chosen_by_its_id(example: str, how: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# My project\nIt does things.\n")
    async with AcpTestClient.spawn(sys.executable, str(EXAMPLES / example), root=tmp_path, env=OFFLINE) as c:
        await c.initialize()
        sid = await c.new_session()
        assert c.last_session is not None and c.last_session.config_options is not None
        (model,) = [o for o in c.last_session.config_options if o.id == "model"]
        if how == "config option":  # what `acpx set model offline-summariser` sends
            await c.set_config_option(sid, "model", "offline-summariser")
        else:
            switched = await c.prompt("/model offline-summariser", session_id=sid)
            assert switched.stop_reason == "end_turn"
        r = await c.prompt("Summarise README.md", session_id=sid)
    assert [v.value for v in model.options] == IDS and model.current_value == "offline-planner"
    assert r.stop_reason == "end_turn"
    assert r.text == SUMMARY[example]
