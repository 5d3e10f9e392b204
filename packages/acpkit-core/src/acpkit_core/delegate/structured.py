"""Structured output through an ACP agent used as a model.

A framework asks its model for structured output in one of two ways: "call one of these output
tools" (pydantic-ai's `ToolOutput`, LangChain's `with_structured_output` / `ToolStrategy`) or
"answer with JSON for this schema" (pydantic-ai's `NativeOutput`, LangChain's `ProviderStrategy`).
An ACP agent cannot be handed tools, but it can be asked for one JSON object, and that is what both
become:

1. [`answer_schema`][acpkit_core.delegate.structured.answer_schema] makes one object schema of the
   choices (a choice's own schema, or, for several, an object with exactly one of their names as
   its key);
2. the prompt carries it twice: in `_meta.acpkit.output` (an ACP Kit agent then answers with its
   own model's structured output: see [`acpkit_core.prompt.meta`][acpkit_core.prompt.meta]) and as
   the words of [`answer_instructions`][acpkit_core.delegate.structured.answer_instructions] after
   the prompt's text (any other ACP agent reads those);
3. [`parse_answer`][acpkit_core.delegate.structured.parse_answer] reads the answer back (a code
   fence around the JSON is allowed) into the chosen name and its arguments, which the adapter
   returns as the output tool's call or as the JSON text. An answer that is not such an object is
   returned as it is: the framework's own validation then asks the model again, as it would ask
   any model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..prompt.meta import OutputSchema

__all__ = ["OutputChoice", "answer_instructions", "answer_schema", "answer_text", "parse_answer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputChoice:
    """One structured answer the caller accepts: an output tool, or the one schema of a JSON answer."""

    name: str
    """The output tool's name (or the schema's)."""
    schema: Mapping[str, Any]
    """Its JSON schema (an object)."""
    description: str | None = None
    """What it is, in words."""


def answer_schema(choices: Sequence[OutputChoice]) -> OutputSchema:
    """The one object schema the remote agent answers with, for one or more choices."""
    if not choices:
        raise ValueError("answer_schema needs at least one choice")
    if len(choices) == 1:
        (only,) = choices
        return OutputSchema(schema=dict(only.schema), name=only.name, description=only.description)
    options = [
        {
            "type": "object",
            "properties": {c.name: dict(c.schema)},
            "required": [c.name],
            "additionalProperties": False,
            **({"description": c.description} if c.description else {}),
        }
        for c in choices
    ]
    return OutputSchema(
        schema={"type": "object", "anyOf": options},
        name="answer",
        description="Exactly one of these answers, as an object with its name as the only key: "
        + ", ".join(c.name for c in choices),
    )


def answer_instructions(output: OutputSchema) -> str:
    """The words that ask any ACP agent for the structured answer (sent after the prompt's text):
    [`OutputSchema.instructions`][acpkit_core.prompt.meta.OutputSchema.instructions]."""
    return output.instructions()


def _json_object(text: str) -> dict[str, Any] | None:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        value = json.loads(body[start : end + 1])
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def parse_answer(text: str, choices: Sequence[OutputChoice]) -> tuple[str, dict[str, Any] | str]:
    """The choice the remote agent answered with and its arguments (an object), from its text.

    When the text holds no such object, the first choice's name and the text itself: the
    framework's validation of the arguments then fails and asks again, saying why.
    """
    found = _json_object(text)
    if len(choices) == 1:
        return choices[0].name, found if found is not None else text
    if found is not None and len(found) == 1:
        ((name, args),) = found.items()
        for choice in choices:
            if choice.name == name and isinstance(args, dict):
                return name, cast(dict[str, Any], args)
    return choices[0].name, text


def answer_text(args: Mapping[str, Any] | str) -> str:
    """A structured answer as the text a conversation keeps of it (the same for every call)."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, sort_keys=True)
