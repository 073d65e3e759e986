"""The first-party tapes register through the plugin host like any plugin (R-ARCH-3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_adapters.tapes import InMemoryTape, JsonlTape, SqliteTape
from memory_core.ports.tape import (
    IngestionProjection,
    TapeAnchorWriter,
    TapeInspectionReader,
    TapeRawEntryReader,
)
from memory_plugins.builtin import tapes as builtin_tapes
from memory_plugins.context import FactoryContext
from memory_plugins.errors import PluginLoadError
from memory_plugins.loader import load_plugins

PORTS = (TapeRawEntryReader, TapeAnchorWriter, TapeInspectionReader, IngestionProjection)


def _registry():
    return load_plugins(entry_points=False, plugins=[builtin_tapes], strict=True).registry


@pytest.mark.parametrize(
    ("name", "options", "cls", "file"),
    [
        ("memory", {}, InMemoryTape, None),
        ("jsonl", {}, JsonlTape, "tape.jsonl"),
        ("jsonl", {"path": "chats/main.jsonl"}, JsonlTape, "chats/main.jsonl"),
        ("sqlite", {}, SqliteTape, "tape.sqlite3"),
        ("sqlite", {"path": "host.db", "synchronous": "normal"}, SqliteTape, "host.db"),
    ],
)
def test_each_tape_is_built_by_name_and_satisfies_all_four_ports(
    tmp_path: Path, name: str, options: dict, cls: type, file: str | None
) -> None:
    """R-ARCH-3, R-ARCH-5: chosen by name; relative paths are under the data directory."""
    context = FactoryContext(data_dir=tmp_path, options=options)
    tape = _registry().create_tape(name, context)
    try:
        assert isinstance(tape, cls)
        assert all(isinstance(tape, port) for port in PORTS)
        if file is not None:
            assert (tmp_path / file).exists()
    finally:
        close = getattr(tape, "close", None)
        if close is not None:
            close()


@pytest.mark.parametrize(
    ("name", "options", "key"),
    [
        ("memory", {"path": "x"}, "plugins.tape.options"),
        ("jsonl", {"path": 3}, "plugins.tape.options.path"),
        ("sqlite", {"busy_timeout_ms": 0}, "busy_timeout_ms"),
        ("sqlite", {"synchronous": "SOMETIMES"}, "synchronous"),
    ],
)
def test_bad_options_fail_at_composition_naming_the_key(
    tmp_path: Path, name: str, options: dict, key: str
) -> None:
    """R-ARCH-3: a wrong option is reported with the plugin's name and the key."""
    context = FactoryContext(data_dir=tmp_path, options=options)
    with pytest.raises(PluginLoadError) as excinfo:
        _registry().create_tape(name, context)
    assert f"tape plugin {name!r}" in str(excinfo.value)
    assert key in str(excinfo.value)
