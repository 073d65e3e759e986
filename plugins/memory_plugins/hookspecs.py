"""Hook specifications: one registration hook per port family (R-ARCH-3).

A plugin module implements any of these with `@hookimpl` and calls `register` once per
implementation it offers:

    from memory_plugins import hookimpl

    @hookimpl
    def agent_memory_register_embedding_providers(register):
        register("my-embedder", make_embedder, description="…")

`register(name, factory, *, description="", capabilities=())` — `factory(context)` receives
a `FactoryContext` (data directory, settings, the plugin's own options from config, clocks,
secret policy) and returns an object satisfying the family's port. Hooks run once, at
load time; nothing calls them on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

__all__ = ["PORT_FAMILIES", "PROJECT_NAME", "RegisterCallback", "hookimpl", "hookspec"]

PROJECT_NAME = "agent_memory"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

RegisterCallback = Callable[..., None]

# family name -> hook name; the family names are what config files and the CLI use.
PORT_FAMILIES: dict[str, str] = {
    "claim_store": "agent_memory_register_claim_stores",
    "vector_store": "agent_memory_register_vector_stores",
    "embedding_provider": "agent_memory_register_embedding_providers",
    "text_provider": "agent_memory_register_text_providers",
    "extractor": "agent_memory_register_extractors",
    "tape": "agent_memory_register_tapes",
    "clock": "agent_memory_register_clocks",
    "secret_policy": "agent_memory_register_secret_policies",
    "cursor_store": "agent_memory_register_cursor_stores",
}


@hookspec
def agent_memory_register_claim_stores(register: RegisterCallback) -> None:
    """Register `ClaimStore` factories (authoritative claims + FTS + directives + jobs)."""


@hookspec
def agent_memory_register_vector_stores(register: RegisterCallback) -> None:
    """Register `VectorStore` factories."""


@hookspec
def agent_memory_register_embedding_providers(register: RegisterCallback) -> None:
    """Register `EmbeddingProvider` factories."""


@hookspec
def agent_memory_register_text_providers(register: RegisterCallback) -> None:
    """Register `TextProvider` factories."""


@hookspec
def agent_memory_register_extractors(register: RegisterCallback) -> None:
    """Register `Extractor` factories."""


@hookspec
def agent_memory_register_tapes(register: RegisterCallback) -> None:
    """Register tape adapter factories (objects implementing the tape ports)."""


@hookspec
def agent_memory_register_clocks(register: RegisterCallback) -> None:
    """Register clock factories (`DomainClock` and/or `InfraClock` implementations)."""


@hookspec
def agent_memory_register_secret_policies(register: RegisterCallback) -> None:
    """Register `SecretPolicy` factories."""


@hookspec
def agent_memory_register_cursor_stores(register: RegisterCallback) -> None:
    """Register `CursorStore` factories (per-session extraction cursors)."""
