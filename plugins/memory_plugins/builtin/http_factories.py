"""The one shape of a first-party HTTP provider's factory, embedder or text provider alike.

Structure the `[plugins.<family>.options]` table, import the adapter only now (listing the
plugins loads no HTTP client), and build it with the API key resolved and the answer size
capped by the settings; a ValidationError from the key or the constructor is re-addressed to
the option that caused it. Returns the bare provider: the composition root wraps it in the
provider guard.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from memory_core.settings import MemorySettings
from memory_plugins.config import build_from_options, structure_options
from memory_plugins.context import FactoryContext

__all__ = ["DEFAULT_OLLAMA_URL", "HttpProviderOptions", "http_factory"]

# The adapter's own default (`memory_adapters.httpx_providers.DEFAULT_OLLAMA_URL`, a test
# keeps the two equal), spelt here so listing the options imports no HTTP client.
DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"


class HttpProviderOptions(Protocol):
    """The options every HTTP provider takes (read-only, as the frozen options classes are)."""

    @property
    def base_url(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def timeout_seconds(self) -> float | None: ...
    @property
    def max_connections(self) -> int: ...


OptionsT = TypeVar("OptionsT", bound=HttpProviderOptions)


def _nothing_more(_: object) -> Mapping[str, object]:
    return {}


def http_factory(
    family: str,
    options_type: type[OptionsT],
    adapter: str,
    *,
    max_response_bytes: Callable[[MemorySettings], int],
    extra: Callable[[OptionsT], Mapping[str, object]] = _nothing_more,
) -> Callable[[FactoryContext], object]:
    """The factory of `memory_adapters.httpx_providers.<adapter>`; `extra` gives the
    constructor arguments only that adapter takes (from its options)."""

    def make(context: FactoryContext) -> object:
        from memory_adapters import httpx_providers

        options = structure_options(context.options, options_type, family=family)
        provider = getattr(httpx_providers, adapter)
        return build_from_options(
            lambda: provider(
                base_url=options.base_url,
                model=options.model,
                api_key=httpx_providers.resolve_api_key(options.api_key, options.api_key_env),
                timeout_cap=options.timeout_seconds,
                max_connections=options.max_connections,
                max_response_bytes=max_response_bytes(context.settings),
                **extra(options),
            ),
            family=family,
        )

    return make
