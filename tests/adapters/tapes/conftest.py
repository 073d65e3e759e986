"""Fixtures for the tape adapter tests: each first-party tape, fresh per test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_adapters.tapes import InMemoryTape, JsonlTape, SqliteTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline


@pytest.fixture(params=["memory", "jsonl", "sqlite"])
def any_tape(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemoryTape()
    elif request.param == "jsonl":
        with JsonlTape(tmp_path / "tape.jsonl") as tape:
            yield tape
    else:
        with SqliteTape(tmp_path / "tape.sqlite3") as tape:
            yield tape


@pytest.fixture
def call() -> Callable[..., Any]:
    """Run one port call with a fresh 30 s deadline and token."""
    clock = ManualClock()

    def run(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        deadline = Deadline.after(clock, 30.0)
        return asyncio.run(method(*args, deadline=deadline, cancel=CancellationToken(), **kwargs))

    return run
