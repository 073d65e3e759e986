"""The plugin module the `agent_memory` entry point names: registers "hash-embedder".

`agent-memory plugins` lists it; a config file selects it:

    [plugins.embedding_provider]
    name = "hash-embedder"
    [plugins.embedding_provider.options]
    dimensions = 128
    key_env = "HASH_EMBEDDER_KEY"   # optional: the environment variable holding the key
"""

from __future__ import annotations

import os

import attrs

from agent_memory_hash_embedder.embedder import MAX_DIMENSIONS, HashEmbedder
from memory_core.domain.errors import ConfigError
from memory_plugins import FactoryContext, hookimpl
from memory_plugins.config import structure_options
from memory_plugins.hookspecs import Register

__all__ = ["HashEmbedderOptions", "agent_memory_register_embedding_providers"]

FAMILY = "embedding_provider"


@attrs.frozen(kw_only=True)
class HashEmbedderOptions:
    """`[plugins.embedding_provider.options]` of "hash-embedder"."""

    dimensions: int = attrs.field(
        default=64, validator=[attrs.validators.ge(1), attrs.validators.le(MAX_DIMENSIONS)]
    )
    # The key is a secret: the config names the environment variable, never the value.
    key_env: str | None = None


def make_hash_embedder(context: FactoryContext) -> HashEmbedder:
    """The factory: options in (bad ones become a ConfigError naming the key), provider out."""
    options = structure_options(context.options, HashEmbedderOptions, family=FAMILY)
    key = None
    if options.key_env is not None:
        key = os.environ.get(options.key_env)
        if not key:
            raise ConfigError(
                f"plugins.{FAMILY}.options.key_env: environment variable "
                f"{options.key_env!r} is not set"
            )
    return HashEmbedder(dimensions=options.dimensions, key=key)


@hookimpl
def agent_memory_register_embedding_providers(register: Register) -> None:
    register(
        "hash-embedder",
        make_hash_embedder,
        description="Keyed BLAKE2b feature hashing of words; deterministic, offline, no model.",
        capabilities=("offline", "deterministic"),
    )
