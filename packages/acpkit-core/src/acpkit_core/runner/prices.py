"""A model's context window and the price of a response, for the context meter (`usage_update`).

Both come from [genai-prices](https://github.com/pydantic/genai-prices), pydantic's table of
models and prices (pydantic-ai uses it too). It is an optional dependency of `acpkit-core`
(the `prices` extra, which langchain-acp installs; pydantic-ai brings it along for pydantic-acp):
without it, or for a model it does not know, both answers are `None` and the meter shows what the
framework or the developer's `context_window` option says.

The emitter asks here only for what the runner did not report itself
([`TurnUsage.context_size`][acpkit_core.runner.types.TurnUsage.context_size],
[`TurnUsage.cost`][acpkit_core.runner.types.TurnUsage.cost]); a runner only has to name the model that
answered ([`TurnUsage.model`][acpkit_core.runner.types.TurnUsage.model]).
"""

from __future__ import annotations

import functools
import importlib
import logging
from typing import Any

__all__ = ["context_window", "response_cost"]

log = logging.getLogger("acpkit_core.prices")


@functools.cache
def _prices() -> Any:
    try:
        return importlib.import_module("genai_prices")
    except ImportError:
        return None


def _calc(model: str, provider: str | None, **tokens: int) -> Any:
    """genai-prices' calculation for `model` (trying without `provider` when it does not know that id)."""
    prices = _prices()
    if prices is None:
        return None
    usage = prices.Usage(**tokens)
    for provider_id in dict.fromkeys([provider, None]):
        try:
            return prices.calc_price(usage, model, provider_id=provider_id)
        except LookupError:
            continue
        except Exception as exc:  # a bug or a data problem in the table must not fail a turn
            log.debug("genai-prices could not price %r: %s", model, exc)
            return None
    return None


@functools.lru_cache(maxsize=256)
def context_window(model: str | None, provider: str | None = None) -> int | None:
    """The context window of `model` (as the framework names it: `gpt-4o`, `claude-sonnet-4-5`) in tokens, if known."""
    if not model:
        return None
    found = _calc(model, provider)
    window = getattr(getattr(found, "model", None), "context_window", None)
    return window if isinstance(window, int) and window > 0 else None


def response_cost(
    model: str | None,
    provider: str | None = None,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
) -> float | None:
    """The price of one model response in US dollars, if the model's prices are known."""
    if not model:
        return None
    tokens = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read_tokens:
        tokens["cache_read_tokens"] = cache_read_tokens
    if cache_write_tokens:
        tokens["cache_write_tokens"] = cache_write_tokens
    found = _calc(model, provider, **tokens)
    total = getattr(found, "total_price", None)
    return float(total) if total is not None else None
