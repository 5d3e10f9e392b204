"""A pydantic-ai agent on a model named `gpt-4o` (scripted, offline): the context meter over stdio.

`METER_WINDOW` in the environment sets `context_window` (the developer's window).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pydantic_acp import run_acp
from pydantic_ai import Agent
from pydantic_ai.models.function import FunctionModel

sys.path.insert(0, str(Path(__file__).parent))
from pyd_script import Script, call

script = Script([[call("look", id="look-1")], ["All clear."]])
agent = Agent(FunctionModel(stream_function=script._stream, model_name="gpt-4o"))  # no window in its profile


@agent.tool_plain
def look() -> str:
    """Look around."""
    return "nothing here"


if __name__ == "__main__":
    window = os.environ.get("METER_WINDOW")
    run_acp(agent, name="meter", store="memory", context_window=int(window) if window else None)
