"""First-party tape registrations: "memory", "jsonl" and "sqlite".

"memory" keeps the tape in the process (demos, tests, hosts that hand memory a copy);
"jsonl" is one append-only JSON Lines file (docs/tape-format.md), the format the CLI ingests;
"sqlite" is a host-style store with an ingestion projection (R-WRITE-8). A relative `path`
is taken against the data directory. Registered through the `agent_memory` entry-point
group like any third-party plugin (R-ARCH-3); chosen by name from `[plugins.tape]`.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from memory_core.ports.tape import TapeRawEntryReader
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

__all__ = [
    "JsonlTapeOptions",
    "MemoryTapeOptions",
    "SqliteTapeOptions",
    "agent_memory_register_tapes",
]


def _positive(instance: object, attribute: attrs.Attribute, value: int) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be > 0")


def _synchronous(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if value.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ValueError(f"{attribute.name} must be OFF, NORMAL, FULL or EXTRA")


@attrs.frozen(kw_only=True)
class MemoryTapeOptions:
    """`[plugins.tape.options]` of the "memory" tape: none."""


@attrs.frozen(kw_only=True)
class JsonlTapeOptions:
    """`[plugins.tape.options]` of the "jsonl" tape."""

    path: str = "tape.jsonl"  # relative to the data directory


@attrs.frozen(kw_only=True)
class SqliteTapeOptions:
    """`[plugins.tape.options]` of the "sqlite" tape."""

    path: str = "tape.sqlite3"  # relative to the data directory
    busy_timeout_ms: int = attrs.field(default=5_000, validator=_positive)
    synchronous: str = attrs.field(default="FULL", validator=_synchronous)


def _resolve(context: FactoryContext, path: str) -> Path:
    return context.data_dir / Path(path).expanduser()  # an absolute path replaces data_dir


def _make_memory(context: FactoryContext) -> TapeRawEntryReader:
    from memory_adapters.tapes import InMemoryTape

    structure_options(context.options, MemoryTapeOptions, family="tape")
    return InMemoryTape()


def _make_jsonl(context: FactoryContext) -> TapeRawEntryReader:
    from memory_adapters.tapes import JsonlTape

    options = structure_options(context.options, JsonlTapeOptions, family="tape")
    return JsonlTape(_resolve(context, options.path))


def _make_sqlite(context: FactoryContext) -> TapeRawEntryReader:
    from memory_adapters.tapes import SqliteTape

    options = structure_options(context.options, SqliteTapeOptions, family="tape")
    return SqliteTape(
        _resolve(context, options.path),
        busy_timeout_ms=options.busy_timeout_ms,
        synchronous=options.synchronous,
    )


@hookimpl
def agent_memory_register_tapes(register: Register) -> None:
    capabilities = ("raw-reader", "anchor-writer", "inspection", "ingestion-projection")
    register(
        "memory",
        _make_memory,
        description="In-process tape: nothing persisted (demos, tests, hosts passing a copy).",
        capabilities=capabilities,
    )
    register(
        "jsonl",
        _make_jsonl,
        description="One append-only JSON Lines file, fsync per append (docs/tape-format.md).",
        capabilities=(*capabilities, "persistent"),
    )
    register(
        "sqlite",
        _make_sqlite,
        description="SQLite host store with an ingestion projection read in one statement.",
        capabilities=(*capabilities, "persistent"),
    )
