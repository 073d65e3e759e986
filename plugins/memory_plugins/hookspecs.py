"""Hook specifications: one registration hook per port family (R-ARCH-3).

A plugin module implements any of these with `@hookimpl` and calls `register` once per
implementation it offers:

    from memory_plugins import hookimpl

    @hookimpl
    def agent_memory_register_embedding_providers(register):
        register("my-embedder", make_embedder, description="…")

`register` is typed by the `Register` Protocol, so a plugin annotating its hook argument
`register: Register` is checked by a type checker against what the loader really calls:
`factory(context)` receives a `FactoryContext` (data directory, settings, the plugin's own
options from config, clocks, secret policy) and returns an object satisfying the family's
port. Hooks run once, at load time; nothing calls them on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

import pluggy

from memory_plugins.context import FactoryContext

__all__ = ["PORT_FAMILIES", "PROJECT_NAME", "Register", "hookimpl", "hookspec"]

PROJECT_NAME = "agent_memory"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class Register(Protocol):
    """The callback every registration hook receives, bound by the loader to the hook's family
    and the plugin's distribution. docs/hooks.md shows this signature (a test checks it)."""

    def __call__(
        self,
        name: str,
        factory: Callable[[FactoryContext], object],
        *,
        description: str = "",
        capabilities: Iterable[str] = (),
    ) -> None:
        """Offer one implementation: `name` unique in the family, `factory(context)` building
        the port object when a config chooses it. Raises PluginLoadError for a bad name, a
        factory that is not callable, or a description or capabilities that are not strings."""
        ...


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
def agent_memory_register_claim_stores(register: Register) -> None:
    """Register `ClaimStore` factories (authoritative claims + FTS + directives + jobs)."""


@hookspec
def agent_memory_register_vector_stores(register: Register) -> None:
    """Register `VectorStore` factories."""


@hookspec
def agent_memory_register_embedding_providers(register: Register) -> None:
    """Register `EmbeddingProvider` factories."""


@hookspec
def agent_memory_register_text_providers(register: Register) -> None:
    """Register `TextProvider` factories."""


@hookspec
def agent_memory_register_extractors(register: Register) -> None:
    """Register `Extractor` factories."""


@hookspec
def agent_memory_register_tapes(register: Register) -> None:
    """Register tape adapter factories (objects implementing the tape ports)."""


@hookspec
def agent_memory_register_clocks(register: Register) -> None:
    """Register clock factories (`DomainClock` and/or `InfraClock` implementations)."""


@hookspec
def agent_memory_register_secret_policies(register: Register) -> None:
    """Register `SecretPolicy` factories."""


@hookspec
def agent_memory_register_cursor_stores(register: Register) -> None:
    """Register `CursorStore` factories (per-session extraction cursors)."""
