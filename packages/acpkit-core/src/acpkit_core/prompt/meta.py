"""What a client may ask of one prompt besides its blocks, in the prompt's `_meta`.

ACP lets a request carry extras in `_meta`. ACP Kit reads two, under `_meta.acpkit`:

```json
{"sessionId": "...", "prompt": [...],
 "_meta": {"acpkit": {"model": "fast",
                      "output": {"name": "Answer", "schema": {"type": "object", ...}}}}}
```

- `model`: answer this prompt with that model (one of the agent's `models`), without changing the
  session's model;
- `output`: answer with one JSON object that validates against `schema` (how an ACP agent serves
  as a model asked for structured output: see [ACP agents as models](../../core/delegate.md)).
  pydantic-acp runs its agent with that output type; langchain-acp adds
  [`OutputSchema.instructions`][acpkit_core.prompt.meta.OutputSchema.instructions] to the prompt
  when its text does not already carry them.

[`prompt_options`][acpkit_core.prompt.meta.prompt_options] reads and checks them on the server
(a bad value is -32602 naming the field); [`prompt_meta`][acpkit_core.prompt.meta.prompt_meta]
builds them on the client side. A client that sends neither gets the usual turn, and an agent
that does not know these keys ignores them, as ACP asks of unknown `_meta`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..errors import PromptError

__all__ = ["PROMPT_META_KEY", "OutputSchema", "PromptOptions", "prompt_meta", "prompt_options"]

PROMPT_META_KEY = "acpkit"
"""The key of a prompt's `_meta` under which ACP Kit's per-prompt options are."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSchema:
    """The structured answer a prompt asks for: one JSON object that validates against `schema`."""

    schema: Mapping[str, Any]
    """A JSON schema of an object (`{"type": "object", "properties": ...}`)."""
    name: str = "final_result"
    """A name for the answer (a framework's output tool or schema name)."""
    description: str | None = None
    """What the answer is, in words (given to the model with the schema)."""

    def instructions(self) -> str:
        """The words that ask a model (or any ACP agent) for this answer, added after a prompt's text."""
        about = f" ({self.description})" if self.description else ""
        return (
            f"Answer with a single JSON object{about} and nothing else: no prose before or after it, no code "
            "fence. It must validate against this JSON schema:\n"
            f"{json.dumps(dict(self.schema), ensure_ascii=False, sort_keys=True)}"
        )

    def to_json(self) -> dict[str, Any]:
        """The wire form (`_meta.acpkit.output`)."""
        out: dict[str, Any] = {"name": self.name, "schema": dict(self.schema)}
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptOptions:
    """What one prompt asked for in `_meta.acpkit` (everything `None` when it asked for nothing)."""

    model: str | None = None
    """The model to answer this prompt with (an id of the agent's `models`)."""
    output: OutputSchema | None = None
    """The structured answer asked for."""


def prompt_meta(*, model: str | None = None, output: OutputSchema | None = None) -> dict[str, Any]:
    """The `_meta` a client sends with a prompt to ask for `model` and/or a structured `output`."""
    options: dict[str, Any] = {}
    if model is not None:
        options["model"] = model
    if output is not None:
        options["output"] = output.to_json()
    return {PROMPT_META_KEY: options} if options else {}


def _field(name: str) -> str:
    return f"_meta.{PROMPT_META_KEY}.{name}"


def _output(value: object) -> OutputSchema:
    if not isinstance(value, Mapping):
        raise PromptError(
            "must be an object with `schema` (a JSON schema) and optionally `name`", field=_field("output")
        )
    raw = cast(Mapping[str, Any], value)
    schema = raw.get("schema")
    if not isinstance(schema, Mapping) or cast(Mapping[str, Any], schema).get("type") != "object":
        raise PromptError(
            'must be the JSON schema of an object ({"type": "object", ...})', field=_field("output.schema")
        )
    name = raw.get("name", "final_result")
    if not isinstance(name, str) or not name:
        raise PromptError("must be a non-empty string", field=_field("output.name"))
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        raise PromptError("must be a string", field=_field("output.description"))
    return OutputSchema(schema=cast(Mapping[str, Any], schema), name=name, description=description)


def prompt_options(meta: Mapping[str, Any] | None, *, models: Sequence[str]) -> PromptOptions:
    """Read `_meta.acpkit` of a prompt; raise `PromptError` (-32602) for a value the agent cannot honour.

    `models` are the ids the agent offers: a `model` outside them is refused, naming them (an
    agent that offers no models refuses any).
    """
    raw = (meta or {}).get(PROMPT_META_KEY)
    if raw is None:
        return PromptOptions()
    if not isinstance(raw, Mapping):
        raise PromptError("must be an object", field=f"_meta.{PROMPT_META_KEY}")
    options = cast(Mapping[str, Any], raw)
    model = options.get("model")
    if model is not None:
        if not isinstance(model, str):
            raise PromptError("must be a model id (a string)", field=_field("model"))
        if model not in models:
            offered = f"the models are {', '.join(models)}" if models else "this agent offers no models"
            raise PromptError(f"unknown model {model!r}; {offered}", field=_field("model"))
    output = options.get("output")
    return PromptOptions(model=model, output=_output(output) if output is not None else None)
