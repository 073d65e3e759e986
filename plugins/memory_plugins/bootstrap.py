"""The composition root: `open_memory` builds a MemoryService from plugins (R-ARCH-5).

The only code that picks implementations — by name from the config file, through the plugin
registry. Families build in dependency order: clocks, the secret policy, the claim store
and cursors, vectors and providers (every provider wrapped in the deadline guard, so even a
third-party provider that ignores its deadline cannot hang a turn), the extractor, then the
services. With no config at all this is the embedded, offline default: SQLite + DuckDB files
under the data directory, the local MiniLM embedder, the rules extractor.

A family whose config names `"none"` is switched off where that makes sense: no
`embedding_provider` or `vector_store` means FTS-only recall; no extractor means no
background ingestion.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_adapters.provider_guard import GuardedEmbeddingProvider, GuardedTextProvider
from memory_core.domain.errors import ConfigError
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.tape import IngestionProjection, TapeAnchorWriter, TapeRawEntryReader
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.neighbours import RetrievalNeighbours
from memory_core.services.read.retrieval.service import RetrievalService
from memory_core.services.service import MemoryService
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.decision.service import DecisionService
from memory_core.services.write.fences import AgentLocks, WriteCoordinator
from memory_core.services.write.ingestion.service import IngestionServices
from memory_plugins.config import MemoryConfig, PluginChoice, load_config
from memory_plugins.context import FactoryContext
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry

__all__ = ["DEFAULT_DATA_DIR", "DISABLED", "open_memory", "resolve_data_dir"]

DEFAULT_DATA_DIR = Path(".agent-memory")
DATA_DIR_ENV = "AGENT_MEMORY_HOME"
DISABLED = "none"


def resolve_data_dir(explicit: str | os.PathLike[str] | None, config: MemoryConfig) -> Path:
    """The flag or argument, then AGENT_MEMORY_HOME, then the config's, then the default."""
    if explicit is not None:
        return Path(explicit)
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    return config.data_dir or DEFAULT_DATA_DIR


def open_memory(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    config: MemoryConfig | str | os.PathLike[str] | None = None,
    tape: object | None = None,
    plugins: Iterable[object] = (),
    registry: PluginRegistry | None = None,
    strict_plugins: bool = False,
) -> MemoryService:
    """Build the memory service. Nothing here waits on I/O beyond opening local files.

    :param data_dir: where the embedded stores keep their files.
    :param config: a `MemoryConfig`, a path to a TOML file, or None for the defaults.
    :param tape: the host's tape adapter — an object implementing `TapeRawEntryReader`,
        `TapeAnchorWriter` and `IngestionProjection`. Without one (and no `[plugins.tape]`),
        turns are still contributed to, but nothing is extracted in the background.
    :param plugins: extra plugin objects to register next to the installed ones.
    :param registry: a registry already loaded (tests, hosts that load plugins themselves).
    """
    if not isinstance(config, MemoryConfig):
        config = load_config(config)
    root = resolve_data_dir(data_dir, config)
    root.mkdir(parents=True, exist_ok=True)
    if registry is None:
        registry = load_plugins(strict=strict_plugins, plugins=plugins).registry
    built: list[Any] = []
    try:
        return _compose(config, root, registry, tape, built)
    except BaseException:
        for resource in reversed(built):
            closer = getattr(resource, "close", None)
            if callable(closer):
                closer()
        raise


def _context(
    root: Path, config: MemoryConfig, choice: PluginChoice, **shared: Any
) -> FactoryContext:
    return FactoryContext(data_dir=root, settings=config.settings, options=choice.options, **shared)


def _chosen(config: MemoryConfig, family: str) -> PluginChoice | None:
    choice = config.choice(family)
    return None if choice is None or choice.name == DISABLED else choice


def _required(config: MemoryConfig, family: str) -> PluginChoice:
    choice = _chosen(config, family)
    if choice is None:
        raise ConfigError(f"plugins.{family}: required, cannot be '{DISABLED}'")
    return choice


def _compose(
    config: MemoryConfig,
    root: Path,
    registry: PluginRegistry,
    tape: object | None,
    built: list[Any],
) -> MemoryService:
    settings = config.settings
    clock_choice = _required(config, "clock")
    domain_clock: DomainClock = registry.create_domain_clock(
        clock_choice.name, _context(root, config, clock_choice)
    )
    infra_clock: InfraClock = registry.create_infra_clock(
        clock_choice.name, _context(root, config, clock_choice)
    )
    policy_choice = _required(config, "secret_policy")
    secret_policy = registry.create_secret_policy(
        policy_choice.name, _context(root, config, policy_choice)
    )
    shared = {
        "domain_clock": domain_clock,
        "infra_clock": infra_clock,
        "secret_policy": secret_policy,
    }

    store_choice = _required(config, "claim_store")
    store = registry.create_claim_store(
        store_choice.name, _context(root, config, store_choice, **shared)
    )
    built.append(store)

    embedder = None
    vectors = None
    if (choice := _chosen(config, "embedding_provider")) is not None:
        embedder = GuardedEmbeddingProvider(
            registry.create_embedding_provider(
                choice.name, _context(root, config, choice, **shared)
            )
        )
        if (vector_choice := _chosen(config, "vector_store")) is not None:
            vectors = registry.create_vector_store(
                vector_choice.name, _context(root, config, vector_choice, **shared)
            )
    text = None
    if (choice := _chosen(config, "text_provider")) is not None:
        text = GuardedTextProvider(
            registry.create_text_provider(choice.name, _context(root, config, choice, **shared))
        )
    gateway = ProviderGateway(clock=infra_clock, embedder=embedder, text=text, settings=settings)
    scheduler = AsyncioScheduler()
    index = VectorIndex(
        store=store,
        vectors=vectors,
        gateway=gateway,
        domain_clock=domain_clock,
        locks=AgentLocks(scheduler),
        scheduler=scheduler,
        infra_clock=infra_clock,
    )
    retrieval = RetrievalService(
        store=store,
        domain_clock=domain_clock,
        infra_clock=infra_clock,
        index=index,
        gateway=gateway,
        settings=settings,
    )
    coordinator = WriteCoordinator(scheduler)

    if tape is None and (tape_choice := _chosen(config, "tape")) is not None:
        tape = registry.create_tape(tape_choice.name, _context(root, config, tape_choice, **shared))
    anchors = tape if isinstance(tape, TapeAnchorWriter) else None
    service_args: dict[str, Any] = {}
    extractor_choice = _chosen(config, "extractor")
    if tape is not None and extractor_choice is not None:
        if not (isinstance(tape, TapeRawEntryReader) and isinstance(tape, IngestionProjection)):
            raise ConfigError(
                "tape: ingestion needs TapeRawEntryReader, TapeAnchorWriter and "
                "IngestionProjection; the given tape lacks one"
            )
        extractor = registry.create_extractor(
            extractor_choice.name,
            _context(root, config, extractor_choice, text_provider=text, **shared),
        )
        cursor_choice = _required(config, "cursor_store")
        cursors = registry.create_cursor_store(
            cursor_choice.name, _context(root, config, cursor_choice, **shared)
        )
        built.append(cursors)
        service_args["ingestion"] = IngestionServices(
            extractor=extractor,
            decisions=DecisionService(
                store,
                gateway=gateway if text is not None else None,
                # llm decision mode: same-scope neighbours from decision-purpose retrieval.
                neighbours=RetrievalNeighbours(retrieval) if text is not None else None,
            ),
            tape=tape,
            projection=tape,
            anchors=anchors,
            cursors=cursors,
            coordinator=coordinator,
            scheduler=scheduler,
            domain_clock=domain_clock,
            infra_clock=infra_clock,
            # The embedding pipeline follows every committed extraction (late-bound: the
            # service is built just below).
            on_committed=lambda agent_id, ids: service.on_committed(agent_id, ids),  # noqa: PLW0108
        )
    service = MemoryService(
        store=store,
        retrieval=retrieval,
        index=index,
        gateway=gateway,
        coordinator=coordinator,
        scheduler=scheduler,
        domain_clock=domain_clock,
        infra_clock=infra_clock,
        settings=settings,
        anchors=anchors,
        **service_args,
    )
    return service
