"""How the `acpkit` command finds framework adapters without importing them.

Each adapter package declares an entry point in the group `acpkit.adapters` whose value is an
object satisfying [`Adapter`][acpkit_core.cli.adapters.Adapter]. Core never imports an adapter by
name; a third framework plugs in the same way.

```toml
[project.entry-points."acpkit.adapters"]
myframework = "my_acp._cli_adapter:adapter"
```
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from ..config import AgentOptions
from ..prompt.ir import Prompt

__all__ = ["ENTRY_POINT_GROUP", "Adapter", "load_adapters"]

ENTRY_POINT_GROUP = "acpkit.adapters"
"""The entry-point group adapters register under."""


@runtime_checkable
class Adapter(Protocol):
    """What an adapter exposes to the `acpkit` command."""

    @property
    def name(self) -> str:
        """Short name (`pydantic`, `langchain`)."""
        ...

    @property
    def package(self) -> str:
        """The distribution to install for it (`pydantic-acp`)."""
        ...

    def supports(self, obj: object) -> bool:
        """True when `obj` is something this adapter serves (an agent, a graph, a factory of one)."""
        ...

    def describe(self, obj: object) -> str:
        """A short description of `obj` for messages (`pydantic_ai.Agent 'assistant'`)."""
        ...

    def create_agent(self, obj: object, options: AgentOptions) -> Any:
        """Build the ACP agent object (what `acp.run_agent` takes) serving `obj`."""
        ...

    def render(self, prompt: Prompt) -> Any:
        """The framework input `prompt` renders to, as JSON-able data (for `acpkit render`)."""
        ...


def load_adapters() -> list[Adapter]:
    """Load every installed adapter, skipping (and not raising for) ones whose import fails."""
    found: list[Adapter] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception:
            continue
        if isinstance(obj, Adapter):
            found.append(obj)
    return sorted(found, key=lambda a: a.name)
