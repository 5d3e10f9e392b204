"""The offline model preamble every documentation example runs with (see docs/contributing.md).

Examples name real models (`Agent("openai:gpt-5")`, `create_agent("openai:gpt-5")`) because that is what a
reader writes. Under the tests, `install()` makes every model name resolve to an offline model instead:
pydantic-ai's `TestModel` for `pydantic_ai` names, and langchain-acp's `ScriptedChatModel` (it answers
"done") for `init_chat_model` / `create_agent` names. No key, no network, and the
example's own code runs unchanged. The name `test` (pydantic-ai's own offline model) is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]


def _offline_pydantic_model(original: Callable[..., Any]) -> Callable[..., Any]:
    from pydantic_ai.models.test import TestModel

    def infer_model(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, str) and model != "test":
            return TestModel(model_name=model.partition(":")[2] or model)
        return original(model, *args, **kwargs)

    return infer_model


def _offline_chat_model(*_: Any, **__: Any) -> Any:
    from langchain_acp import ScriptedChatModel

    return ScriptedChatModel()


def install(
    patch: Callable[[object, str, object], None] | None = None, *, pydantic: bool = True, langchain: bool = True
) -> None:
    """Route real model names to offline models, for pydantic-ai and/or LangChain.

    `patch(obj, name, value)` defaults to `setattr`; the tests pass `monkeypatch.setattr` so that it is
    undone after each example.
    """
    setter = patch or setattr
    if pydantic:
        import pydantic_ai.models

        setter(pydantic_ai.models, "infer_model", _offline_pydantic_model(pydantic_ai.models.infer_model))
    if langchain:
        import importlib

        for module in ("langchain.chat_models", "langchain.agents.factory"):
            setter(importlib.import_module(module), "init_chat_model", _offline_chat_model)
