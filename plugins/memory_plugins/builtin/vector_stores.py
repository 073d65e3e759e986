"""First-party vector-store registrations: "duckdb" (the default) and "memory".

"duckdb" keeps one v2 file per agent under `<data_dir>/vectors/` and scans a resident numpy
matrix (R-VEC-1..4). "memory" is the same adapter over private in-memory DuckDB databases:
nothing touches the disk and everything is lost on close — for demos, ephemeral hosts and
tests through the plugin host. (The pure-python `InMemoryVectorStore` in `memory_contracts`
is a test fake; the plugin host does not import the contract package.) Registered through
the `agent_memory` entry-point group like any third-party plugin (R-ARCH-3).
"""

from __future__ import annotations

import attrs

from memory_adapters.clocks import MonotonicClock
from memory_core.ports.clock import InfraClock
from memory_core.ports.vectors import VectorStore
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = [
    "DuckDBVectorOptions",
    "MemoryVectorOptions",
    "agent_memory_register_vector_stores",
]

VECTOR_DIRECTORY = "vectors"


def _positive(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be > 0")


@attrs.frozen(kw_only=True)
class DuckDBVectorOptions:
    """`[plugins.vector_store.options]` of the "duckdb" store."""

    # Agents whose store (file handle + resident matrix) stays open; idle ones beyond it close.
    max_open_stores: int = attrs.field(default=8, validator=_positive)
    # How long an interrupted native call may take to settle before the agent is quarantined.
    grace_seconds: float = attrs.field(default=30.0, validator=_positive)
    # How soon after a delete the agent's file is rewritten without the deleted rows (their
    # ids and bytes leave the file then); deletes within it share one rewrite (R-PRIV-3).
    scrub_delay_seconds: float = attrs.field(default=2.0, validator=_positive)


@attrs.frozen(kw_only=True)
class MemoryVectorOptions:
    """`[plugins.vector_store.options]` of the "memory" store."""

    grace_seconds: float = attrs.field(default=30.0, validator=_positive)


def _clock(context: FactoryContext) -> InfraClock:
    return context.infra_clock if context.infra_clock is not None else MonotonicClock()


def _make_duckdb(context: FactoryContext) -> VectorStore:
    from memory_adapters.duckdb_vectors import DuckDBVectorStore

    options = structure_options(context.options, DuckDBVectorOptions, family="vector_store")
    return DuckDBVectorStore(
        context.data_dir / VECTOR_DIRECTORY,
        _clock(context),
        max_open=options.max_open_stores,
        grace_seconds=options.grace_seconds,
        scrub_delay_seconds=options.scrub_delay_seconds,
    )


def _make_memory(context: FactoryContext) -> VectorStore:
    from memory_adapters.duckdb_vectors import DuckDBVectorStore

    options = structure_options(context.options, MemoryVectorOptions, family="vector_store")
    return DuckDBVectorStore.in_memory(_clock(context), grace_seconds=options.grace_seconds)


@hookimpl
def agent_memory_register_vector_stores(register: Register) -> None:
    register(
        "duckdb",
        _make_duckdb,
        description="One DuckDB file per agent, exact cosine scan over a resident numpy matrix.",
        capabilities=("persistent", "exact"),
    )
    register(
        "memory",
        _make_memory,
        description="The DuckDB store on in-memory databases: exact, nothing persisted.",
        capabilities=("exact",),
    )
