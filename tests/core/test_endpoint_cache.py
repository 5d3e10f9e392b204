"""The models built on a client's endpoints: one per endpoint and name, and only the last few kept."""

from __future__ import annotations

from acpkit_core.runner.providers import EndpointModelCache, LlmEndpoint


def _endpoint(url: str, key: str = "k") -> LlmEndpoint:
    return LlmEndpoint(api_type="openai", base_url=url, headers={"Authorization": f"Bearer {key}"})


def test_a_model_is_built_once_per_endpoint_and_name_and_the_cache_is_bounded() -> None:
    built: list[tuple[str, str]] = []

    def build(endpoint: LlmEndpoint, name: str) -> tuple[str, str]:
        built.append((endpoint.base_url, name))
        return (endpoint.base_url, name)

    cache = EndpointModelCache(build, size=2)
    a = cache.model(_endpoint("http://a/v1"), "m")
    assert cache.model(_endpoint("http://a/v1"), "m") is a  # the same endpoint and name: reused
    cache.model(_endpoint("http://a/v1", key="other"), "m")  # other credentials: another model
    cache.model(_endpoint("http://a/v1"), "m")  # used again: now the most recent
    cache.model(_endpoint("http://b/v1"), "m")  # past the bound: the least recently used goes
    cache.model(_endpoint("http://a/v1"), "m")
    assert built == [("http://a/v1", "m"), ("http://a/v1", "m"), ("http://b/v1", "m")]
    assert len(cache._made) == 2  # pyright: ignore[reportPrivateUsage]
