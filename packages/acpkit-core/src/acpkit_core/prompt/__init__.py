"""The prompt: ACP content blocks -> IR, and the canonical text forms both adapters use."""

from __future__ import annotations

from .dump import dump_part, dump_prompt
from .media import guess_media_type, is_textual
from .meta import PROMPT_META_KEY, OutputSchema, PromptOptions, prompt_meta, prompt_options
from .parse import base64_problem, parse_block, parse_prompt
from .text import (
    binary_summary,
    context_wrapper,
    escape_attribute,
    escape_context_text,
    link_label,
    link_text,
    model_text,
    prompt_text,
    relative_path,
    resource_description,
    uri_name,
)

__all__ = [
    "PROMPT_META_KEY",
    "OutputSchema",
    "PromptOptions",
    "base64_problem",
    "binary_summary",
    "context_wrapper",
    "dump_part",
    "dump_prompt",
    "escape_attribute",
    "escape_context_text",
    "guess_media_type",
    "is_textual",
    "link_label",
    "link_text",
    "model_text",
    "parse_block",
    "parse_prompt",
    "prompt_meta",
    "prompt_options",
    "prompt_text",
    "relative_path",
    "resource_description",
    "uri_name",
]
