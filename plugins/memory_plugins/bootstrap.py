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

A host or a test hands ready objects in directly, as cosmicpython's `bootstrap` does: `clock=`
replaces the clock plugin and `overrides=` any other family, so a double needs no plugin
class around it. Every service gets the configuration's `MemorySettings` explicitly.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypedDict, runtime_checkable

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_adapters.offload import InlineCalls, ThreadedCalls
from memory_adapters.provider_guard import GuardedEmbeddingProvider, GuardedTextProvider
from memory_core.domain.errors import ConfigError
from memory_core.ports.claims import ClaimStore
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.cursor import CursorStore
from memory_core.ports.extraction import Extractor
from memory_core.ports.providers import EmbeddingProvider, TextProvider
from memory_core.ports.secrets import SecretPolicy
from memory_core.ports.tape import IngestionProjection, TapeAnchorWriter, TapeRawEntryReader
from memory_core.ports.telemetry import Telemetry
from memory_core.ports.vectors import VectorStore
from memory_core.services.memory import MemoryService
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.neighbours import RetrievalNeighbours
from memory_core.services.read.retrieval.service import RetrievalService
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.decision.service import DecisionService
from memory_core.services.write.fences import AgentLocks, WriteCoordinator
from memory_core.services.write.ingestion.service import IngestionServices
from memory_core.services.write.ingestion.types import IngestionPolicy
from memory_plugins.config import MemoryConfig, PluginChoice, load_config
from memory_plugins.context import FactoryContext
from memory_plugins.data_dir import resolve_data_dir
from memory_plugins.dir_lock import lock_data_dir
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginRegistry
from memory_plugins.telemetry import default_telemetry, traced_providers

__all__ = [
    "DISABLED",
    "OVERRIDABLE_FAMILIES",
    "BothClocks",
    "Clock",
    "PortOverrides",
    "open_memory",
]

DISABLED = "none"
# A claim-store capability: its calls wait on a network, so the read path runs them off the
# event loop (R-READ-1). One worker: such a store serialises its calls on one connection.
NETWORKED = "networked"


@runtime_checkable
class BothClocks(DomainClock, InfraClock, Protocol):
    """One object serving both clock ports, like the builtin "system" clock."""


Clock = BothClocks | tuple[DomainClock, InfraClock]


class PortOverrides(TypedDict, total=False):
    """Ready objects used instead of building that family from its plugin."""

    claim_store: ClaimStore
    vector_store: VectorStore
    embedding_provider: EmbeddingProvider
    text_provider: TextProvider
    extractor: Extractor
    cursor_store: CursorStore
    secret_policy: SecretPolicy
    telemetry: Telemetry  # default: OpenTelemetry with the `otel` extra, else none
    tape: object  # TapeRawEntryReader + TapeAnchorWriter + IngestionProjection for ingestion


OVERRIDABLE_FAMILIES: tuple[str, ...] = tuple(PortOverrides.__annotations__)


def open_memory(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    config: MemoryConfig | str | os.PathLike[str] | None = None,
    tape: object | None = None,
    clock: Clock | None = None,
    overrides: PortOverrides | Mapping[str, object] | None = None,
    plugins: Iterable[object] = (),
    registry: PluginRegistry | None = None,
    strict_plugins: bool = False,
) -> MemoryService:
    """Build the memory service. Nothing here waits on I/O beyond opening local files.

    :param data_dir: where the embedded stores keep their files (`resolve_data_dir`).
    :param config: a `MemoryConfig`, a path to a TOML file, or None for the defaults.
    :param tape: the host's tape adapter — an object implementing `TapeRawEntryReader`,
        `TapeAnchorWriter` and `IngestionProjection`. Without one (and no `[plugins.tape]`),
        turns are still contributed to, but nothing is extracted in the background.
    :param clock: business and monotonic time instead of the `[plugins.clock]` plugin: one
        object implementing `DomainClock` and `InfraClock`, or a `(domain, infra)` pair.
    :param overrides: ready objects per port family (`PortOverrides`), used instead of
        that family's plugin; an unknown family is a ConfigError naming the key. The
        service owns what it is given: `aclose` closes an overridden store too.
    :param plugins: extra plugin objects to register next to the installed ones.
    :param registry: a registry already loaded (tests, hosts that load plugins themselves).
    """
    if not isinstance(config, MemoryConfig):
        config = load_config(config)
    given = _overrides(overrides, tape)
    clocks = None if clock is None else _clocks(clock)
    root = resolve_data_dir(data_dir, config.data_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission: the user's to fix, in one line
        raise ConfigError(f"data_dir: cannot create {root} ({exc.strerror or exc})") from exc
    if registry is None:
        registry = load_plugins(strict=strict_plugins, plugins=plugins).registry
    # One process per data dir: a second one is refused here, before any store opens
    # (dir_lock.py says why).
    lock = lock_data_dir(root)
    built: list[Any] = []
    try:
        service = _compose(config, root, registry, clocks=clocks, given=given, built=built)
    except BaseException:
        for resource in reversed(built):
            closer = getattr(resource, "close", None)
            if callable(closer):
                closer()
        lock.release()
        raise
    service.on_closed(lock.release)
    return service


def _overrides(overrides: Mapping[str, object] | None, tape: object | None) -> dict[str, Any]:
    given = dict(overrides or {})
    for key in given:
        if key not in OVERRIDABLE_FAMILIES:
            close = difflib.get_close_matches(key, OVERRIDABLE_FAMILIES, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            pass_clock = " (pass the clock as clock=)" if key == "clock" else ""
            raise ConfigError(
                f"overrides.{key}: unknown port family{hint}{pass_clock} "
                f"(families: {', '.join(OVERRIDABLE_FAMILIES)})"
            )
    if tape is not None:
        if "tape" in given:
            raise ConfigError("overrides.tape: given twice, as tape= and in overrides")
        given["tape"] = tape
    return given


def _clocks(clock: object) -> tuple[DomainClock, InfraClock]:
    if isinstance(clock, tuple):
        pair = len(clock) == 2 and isinstance(clock[0], DomainClock)
        if pair and isinstance(clock[1], InfraClock):
            return clock[0], clock[1]
        raise ConfigError("clock: a pair must be (DomainClock, InfraClock)")
    if isinstance(clock, BothClocks):
        return clock, clock
    raise ConfigError(
        "clock: needs now(), timezone() and monotonic() (DomainClock and InfraClock), "
        "or a (DomainClock, InfraClock) pair"
    )


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
    *,
    clocks: tuple[DomainClock, InfraClock] | None,
    given: Mapping[str, Any],
    built: list[Any],
) -> MemoryService:
    settings = config.settings
    shared: dict[str, Any] = {}  # the ports later factories receive, filled as they are built

    def family(name: str, create: Any, *, required: bool = False, **extra: Any) -> Any:
        """The override for `name`, else its plugin's product, else None (switched off)."""
        if name in given:
            return given[name]
        choice = _required(config, name) if required else _chosen(config, name)
        if choice is None:
            return None
        product = create(choice.name, _context(root, config, choice, **shared, **extra))
        if hasattr(product, "close"):
            built.append(product)  # closed again if a later family fails; overrides are not
        return product

    if clocks is None:
        clock_choice = _required(config, "clock")
        clocks = (
            registry.create_domain_clock(clock_choice.name, _context(root, config, clock_choice)),
            registry.create_infra_clock(clock_choice.name, _context(root, config, clock_choice)),
        )
    domain_clock, infra_clock = clocks
    shared.update(domain_clock=domain_clock, infra_clock=infra_clock)
    shared["secret_policy"] = family("secret_policy", registry.create_secret_policy, required=True)
    store = family("claim_store", registry.create_claim_store, required=True)
    # A store given as an override is the caller's to run; one built from a plugin that
    # declares the capability gets the threaded runner.
    networked = (
        "claim_store" not in given
        and NETWORKED
        in registry.get("claim_store", _required(config, "claim_store").name).capabilities
    )
    # Store calls yield through the scheduler: background callers wait there for their
    # share of a busy loop, behind the turns (R-READ-1).
    scheduler = AsyncioScheduler()
    calls = (
        ThreadedCalls(
            workers=1,
            interrupt=getattr(store, "interrupt", None),
            yield_step=scheduler.yield_now,
        )
        if networked
        else InlineCalls(yield_step=scheduler.yield_now)
    )

    embedder = family("embedding_provider", registry.create_embedding_provider)
    vectors = None
    if embedder is not None:
        embedder = GuardedEmbeddingProvider(embedder)
        vectors = family("vector_store", registry.create_vector_store)
    text = family("text_provider", registry.create_text_provider)
    if text is not None:
        text = GuardedTextProvider(text)
    telemetry = given.get("telemetry") or default_telemetry()
    # Outside the guard: a span covers the whole guarded call, deadline errors included.
    embedder, text = traced_providers(telemetry, embedder, text)
    gateway = ProviderGateway(
        clock=infra_clock, embedder=embedder, text=text, settings=settings, scheduler=scheduler
    )
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
        calls=calls,
        index=index,
        gateway=gateway,
        settings=settings,
    )
    coordinator = WriteCoordinator(scheduler)

    tape = family("tape", registry.create_tape)
    anchors = tape if isinstance(tape, TapeAnchorWriter) else None
    service_args: dict[str, Any] = {}
    extractor = None
    if tape is not None:
        extractor = family("extractor", registry.create_extractor, text_provider=text)
    if extractor is not None:
        if not (isinstance(tape, TapeRawEntryReader) and isinstance(tape, IngestionProjection)):
            raise ConfigError(
                "tape: ingestion needs TapeRawEntryReader, TapeAnchorWriter and "
                "IngestionProjection; the given tape lacks one"
            )
        service_args["ingestion"] = IngestionServices(
            extractor=extractor,
            decisions=DecisionService(
                store,
                gateway=gateway if text is not None else None,
                # llm decision mode: same-scope neighbours from decision-purpose retrieval.
                neighbours=RetrievalNeighbours(retrieval) if text is not None else None,
                settings=settings,
            ),
            tape=tape,
            projection=tape,
            anchors=anchors,
            cursors=family("cursor_store", registry.create_cursor_store, required=True),
            coordinator=coordinator,
            scheduler=scheduler,
            domain_clock=domain_clock,
            infra_clock=infra_clock,
            policy=IngestionPolicy.from_settings(settings),
            # The embedding pipeline follows every committed extraction (late-bound: the
            # service is built just below).
            on_committed=lambda agent_id, ids: service.on_committed(agent_id, ids),  # noqa: PLW0108
            settle_committed=lambda agent_id: service.settle_committed(agent_id),  # noqa: PLW0108
            # The rules extractor computes: one worker thread keeps it off the loop (a
            # second would only contend for the GIL and the model's cores).
            offload=ThreadedCalls(workers=1, interrupt=None, yield_step=scheduler.yield_now),
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
        telemetry=telemetry,
        anchors=anchors,
        **service_args,
    )
    return service
