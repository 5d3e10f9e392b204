"""The IR as plain JSON, for `acpkit render`, logs and golden files."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .ir import Binary, Part, Prompt

__all__ = ["dump_part", "dump_prompt"]


def _abbreviate(payload: str, limit: int | None) -> str:
    if limit is None or len(payload) <= limit:
        return payload
    return f"{payload[:limit]}… ({len(payload)} characters)"


def dump_part(part: Part, *, max_payload: int | None = None) -> dict[str, Any]:
    """One part as a JSON object: `kind` first, then every field that is set (`None` left out).

    A `Binary` also gets its decoded `size` (computed, not decoded).
    With `max_payload`, base64 payloads and attached texts longer than that many characters are
    cut and marked with their full length.
    """
    out: dict[str, Any] = {"kind": part.kind}
    for f in fields(part):
        if f.name in ("kind", "_decoded"):
            continue
        value = getattr(part, f.name)
        if value is None:
            continue
        if f.name in ("base64", "text") and part.kind in ("binary", "context"):
            value = _abbreviate(value, max_payload)
        out[f.name] = value
    if isinstance(part, Binary):
        out["size"] = part.size
    return out


def dump_prompt(prompt: Prompt, *, max_payload: int | None = None) -> list[dict[str, Any]]:
    """Every part of `prompt` as `dump_part` gives it."""
    return [dump_part(part, max_payload=max_payload) for part in prompt]
