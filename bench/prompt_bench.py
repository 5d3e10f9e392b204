"""Prompt parse + render throughput and memory, side by side with the floor measured in the same run.

    uv run python bench/prompt_bench.py

Scenarios: a 1 MB and a 20 MB embedded text resource, a 5 MB image (base64 in an `image` block),
2,000 small blocks. For each step: best wall time over a few runs, throughput over the payload,
and the peak of memory allocated during the step (tracemalloc, inputs excluded) as a multiple of
the payload. Floors: `json.loads` of the same `session/prompt` message, and `base64.b64decode`
of the same payload. The `decodes` column counts base64 decodes during the step.
"""

from __future__ import annotations

import base64
import binascii
import gc
import json
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from acpkit_core.prompt import parse_prompt
from langchain_acp import render_prompt as render_langchain
from pydantic_acp import render_prompt as render_pydantic

MB = 1024 * 1024
CODE = "    if (a < b && c / d > 0) { return <li key={i}>{item}</li>; }  // see docs/prompt.md\n"


def message(blocks: list[dict[str, Any]]) -> str:
    params = {"sessionId": "bench", "prompt": blocks}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": params})


def best_time(fn: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_memory(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


class DecodeCounter:
    """Counts base64 decodes (`binascii.a2b_base64`, which the IR and `base64.b64decode` both use)."""

    def __init__(self) -> None:
        self.count = 0
        self._original = binascii.a2b_base64

    def __enter__(self) -> DecodeCounter:
        def counting(*args: Any, **kwargs: Any) -> bytes:
            self.count += 1
            return self._original(*args, **kwargs)

        binascii.a2b_base64 = counting  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        binascii.a2b_base64 = self._original  # type: ignore[assignment]


def row(name: str, step: str, fn: Callable[[], object], payload: int, runs: int) -> None:
    seconds = best_time(fn, runs)
    peak = peak_memory(fn)
    with DecodeCounter() as counter:
        fn()
    print(
        f"{name:<18} {step:<30} {seconds * 1000:>9.2f} ms {payload / MB / seconds:>9.0f} MB/s "
        f"{peak / MB:>8.1f} MB {peak / payload:>6.2f}x {counter.count:>7}"
    )


def scenario(name: str, blocks: list[dict[str, Any]], payload: int, b64: str | None = None, runs: int = 5) -> None:
    raw = message(blocks)
    loaded = json.loads(raw)["params"]["prompt"]
    row(name, "floor: json.loads(message)", lambda: json.loads(raw), payload, runs)
    if b64 is not None:
        row(name, "floor: base64.b64decode", lambda: base64.b64decode(b64), payload, runs)
    row(name, "parse_prompt", lambda: parse_prompt(loaded), payload, runs)

    def pydantic_path() -> object:
        return render_pydantic(parse_prompt(loaded))

    row(name, "parse + pydantic render", pydantic_path, payload, runs)
    row(name, "parse + langchain (legacy)", lambda: render_langchain(parse_prompt(loaded)), payload, runs)
    row(name, "parse + langchain (v1)", lambda: render_langchain(parse_prompt(loaded), blocks="v1"), payload, runs)
    print()


def small_blocks() -> list[dict[str, Any]]:
    """2,000 small blocks: text, resource links, embedded resources and tiny images, 500 of each."""
    small: list[dict[str, Any]] = []
    for i in range(500):
        small += [
            {"type": "text", "text": f"block {i}"},
            {"type": "resource_link", "uri": f"file:///w/src/m{i}.py", "name": f"m{i}.py", "size": i},
            {"type": "resource", "resource": {"uri": f"file:///w/n{i}.md", "text": f"# note {i}\n"}},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        ]
    return small


def main() -> None:
    print(f"{'scenario':<18} {'step':<30} {'time':>12} {'throughput':>14} {'peak':>11} {'/load':>7} {'decodes':>7}")
    for size, runs, tag in ((1, 5, False), (20, 3, False), (20, 3, True)):
        # Source-like ASCII text, full of < and /; optionally one closing tag to escape in the middle.
        half = (CODE * (size * MB // len(CODE) // 2 + 1))[: size * MB // 2]
        text = (half + ("</context>\n" if tag else "") + half)[: size * MB]
        blocks = [
            {"type": "text", "text": "Summarize"},
            {"type": "resource", "resource": {"uri": "file:///w/big.txt", "mimeType": "text/plain", "text": text}},
        ]
        scenario(f"text {size} MB" + (" +tag" if tag else ""), blocks, len(text), runs=runs)
    image = base64.b64encode(os.urandom(5 * MB)).decode()
    blocks = [{"type": "text", "text": "Describe"}, {"type": "image", "mimeType": "image/png", "data": image}]
    scenario("image 5 MB", blocks, len(image), b64=image, runs=5)
    small = small_blocks()
    scenario("2000 small blocks", small, len(message(small)), runs=5)


if __name__ == "__main__":
    main()
