"""Remote agents for the structured-output tests: `python structured_remote.py pydantic|langchain`.

- `pydantic`: a pydantic-ai agent on `TestModel`; asked for a structured answer (`_meta.acpkit.output`)
  it runs with that output type, and `TestModel` fills in the schema (`{"name": "a", "population": 0}`);
- `langchain`: a graph whose model answers a prompt that carries the JSON-schema instructions with a
  city in a code fence, and any other prompt with `plain answer`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    if sys.argv[1] == "pydantic":
        from pydantic_acp import run_acp
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel

        run_acp(Agent(TestModel(), name="structured-pydantic"), store="memory")
    else:
        sys.path.insert(0, str(Path(__file__).parents[2] / "langchain"))
        from fake_model import FakeChatModel, Reply  # pyright: ignore[reportMissingImports, reportUnknownVariableType]
        from langchain.agents import create_agent
        from langchain_acp import run_acp
        from langchain_core.messages import BaseMessage, HumanMessage

        def reply(messages: list[BaseMessage]) -> Any:
            asked = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
            if "JSON schema" in asked:
                return Reply(text='```json\n{"name": "Lyon", "population": 522250}\n```')
            return Reply(text="plain answer")

        model = FakeChatModel(script=[reply], repeat_last=True)
        run_acp(create_agent(model, tools=[], name="structured-langchain"), store="memory")
