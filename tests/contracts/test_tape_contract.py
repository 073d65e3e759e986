"""The tape contract suite against the three first-party tapes (R-ARCH-2, R-WRITE-8, R-HOST-3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_adapters.tapes import InMemoryTape, JsonlTape, SqliteTape
from memory_contracts.tape import TapeContract
from memory_core.ports.tape import EntryRole, TapeEntry

# Capabilities a tape lacks deselect the tests that need them, with the reason reported.
pytest_plugins = ["memory_contracts.pytest_plugin"]

# Every first-party tape implements all four ports; FirstPartyHarness can lag the projection.
ALL_PORTS = frozenset({"tape_anchor_writer", "tape_inspection_reader", "ingestion_projection"})
WITH_HARNESS = ALL_PORTS | {"lagging_projection"}


class FirstPartyHarness:
    """The adapters' own host writes, plus `project=False` for the lagging-projection check."""

    def __init__(self, tape: Any) -> None:
        self._tape = tape
        self.append_message = tape.append_message
        self.replace = tape.replace
        self.retract = tape.retract
        self.fork = tape.fork

    def append_unprojected(self, session_id: str, role: EntryRole, content: str) -> TapeEntry:
        return self._tape.append_message(session_id, role, content, project=False)


class TestInMemoryTapeContract(TapeContract):
    capabilities = WITH_HARNESS

    @pytest.fixture
    def tape(self) -> InMemoryTape:
        return InMemoryTape()

    @pytest.fixture
    def harness(self, tape: InMemoryTape) -> FirstPartyHarness:
        return FirstPartyHarness(tape)


class TestJsonlTapeContract(TapeContract):
    capabilities = WITH_HARNESS

    @pytest.fixture
    def tape(self, tmp_path: Path):
        with JsonlTape(tmp_path / "tape.jsonl") as tape:
            yield tape

    @pytest.fixture
    def harness(self, tape: JsonlTape) -> FirstPartyHarness:
        return FirstPartyHarness(tape)


class TestSqliteTapeContract(TapeContract):
    capabilities = WITH_HARNESS

    @pytest.fixture
    def tape(self, tmp_path: Path):
        with SqliteTape(tmp_path / "tape.sqlite3") as tape:
            yield tape

    @pytest.fixture
    def harness(self, tape: SqliteTape) -> FirstPartyHarness:
        return FirstPartyHarness(tape)


class TestInMemoryTapeAsItsOwnHarness(TapeContract):
    """A tape whose host writes match TapeHarness needs only the `tape` fixture; without
    `append_unprojected` it does not declare "lagging_projection", so that check is
    deselected, as for any harness without it."""

    capabilities = ALL_PORTS

    @pytest.fixture
    def tape(self) -> InMemoryTape:
        return InMemoryTape()
