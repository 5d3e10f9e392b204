"""The `acpkit.adapters` entry point: lets `acpkit run` and `acpkit render` serve pydantic-ai agents."""

from __future__ import annotations

import base64
import inspect
from collections.abc import Sequence
from typing import Any, cast, get_origin

from acpkit_core.config import AgentOptions
from acpkit_core.prompt.ir import Prompt
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import AudioUrl, BinaryContent, DocumentUrl, ImageUrl, UserContent, VideoUrl
from pydantic_core import to_jsonable_python

from ._render import render_prompt

__all__ = ["PydanticAdapter", "adapter", "render_json"]


class PydanticAdapter:
    """Serves a `pydantic_ai` agent, or a factory taking the session and returning one."""

    @property
    def name(self) -> str:
        """`pydantic`."""
        return "pydantic"

    @property
    def package(self) -> str:
        """`pydantic-acp`."""
        return "pydantic-acp"

    def supports(self, obj: object) -> bool:
        """True for a pydantic-ai agent or a function whose return annotation is one."""
        if isinstance(obj, AbstractAgent):
            return True
        if inspect.isfunction(obj):
            try:
                returns = inspect.signature(obj, eval_str=True).return_annotation
            except (NameError, TypeError, ValueError):
                return False
            returns = get_origin(returns) or returns
            return inspect.isclass(returns) and issubclass(returns, AbstractAgent)
        return False

    def describe(self, obj: object) -> str:
        """`pydantic_ai.Agent 'name'`, or `agent factory name()`."""
        if isinstance(obj, AbstractAgent):
            agent = cast("AbstractAgent[Any, Any]", obj)
            kind = f"pydantic_ai.{type(agent).__name__}"
            return f"{kind} {agent.name!r}" if agent.name else kind
        return f"pydantic_ai agent factory {getattr(obj, '__qualname__', obj)!r}"

    def create_agent(self, obj: object, options: AgentOptions) -> Any:
        """The `AcpAgent` serving `obj` with `options`."""
        from acpkit_core import AcpAgent

        from ._runner import PydanticRunner

        if isinstance(obj, AbstractAgent):
            runner = PydanticRunner(cast("AbstractAgent[Any, Any]", obj))
            if options.name == AgentOptions().name and obj.name:
                options.name = obj.name
        else:
            runner = PydanticRunner(agent_factory=obj)  # pyright: ignore[reportArgumentType]
        return AcpAgent(runner, options)

    def render(self, prompt: Prompt) -> Any:
        """The pydantic-ai user prompt, as JSON (binary payloads as base64)."""
        return render_json(render_prompt(prompt))


def render_json(rendered: str | Sequence[UserContent]) -> Any:
    """A rendered prompt as JSON: a string, or a list of strings and `{kind, ...}` objects."""
    if isinstance(rendered, str):
        return rendered
    return [_jsonable(part) for part in rendered]


def _jsonable(part: UserContent) -> Any:
    if isinstance(part, str):
        return part
    if isinstance(part, BinaryContent):
        return {"kind": "binary", "media_type": part.media_type, "base64": base64.b64encode(part.data).decode()}
    if isinstance(part, ImageUrl | AudioUrl | DocumentUrl | VideoUrl):
        return {"kind": part.kind, "url": part.url, "media_type": part.media_type}
    return to_jsonable_python(part, bytes_mode="base64")


adapter = PydanticAdapter()
"""The adapter instance the entry point names."""
