"""Fixtures for the extractor tests: a manual clock on Monday 2026-11-30 10:00Z in Berlin,
and helpers that build a request from (role, text) pairs and run an extractor on it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from extractor_support import REFERENCE, ZONE, MakeRequest, RunExtractor, Turn

from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult, Extractor
from memory_core.ports.tape import TapeEntry


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(REFERENCE, timezone=ZONE)


@pytest.fixture
def make_request(clock: ManualClock) -> MakeRequest:
    def make(turns: Sequence[Turn], *, session_id: str = "s1") -> ExtractionRequest:
        entries = [
            TapeEntry(
                id=f"m{index}", session_id=session_id, order_seq=index, role=role, content=text
            )
            for index, (role, text) in enumerate(turns, start=1)
        ]
        return ExtractionRequest(
            agent_id="agent-1",
            session_id=session_id,
            entries=entries,
            reference_time=clock.now(),
            timezone=clock.timezone(),
        )

    return make


@pytest.fixture
def run(clock: ManualClock) -> RunExtractor:
    def extract(
        extractor: Extractor,
        request: ExtractionRequest,
        *,
        cancel: CancellationToken | None = None,
        seconds: float = 30.0,
    ) -> ExtractionResult:
        deadline = Deadline.after(clock, seconds)
        return asyncio.run(
            extractor.extract(request, deadline=deadline, cancel=cancel or CancellationToken())
        )

    return extract
