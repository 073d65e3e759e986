"""Shared wiring for the write-path integration tests: real store, real tape, real extractor.

Not a test module. Everything a test awaits is real work settling — no sleeps; business and
infrastructure time come from one `ManualClock`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from memory_adapters.asyncio_scheduler import AsyncioScheduler
from memory_adapters.extractors import RulesExtractor
from memory_adapters.sqlite_store import ApswClaimStore
from memory_adapters.tapes.base import EventTape
from memory_adapters.tapes.memory import InMemoryTape
from memory_contracts.fake_cursor import InMemoryCursorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult, Extractor
from memory_core.services.write.decision.service import DecisionService
from memory_core.services.write.fences import WriteCoordinator
from memory_core.services.write.ingestion.service import (
    IngestionPolicy,
    IngestionReport,
    IngestionRuntime,
    IngestionServices,
    SessionKind,
    TurnOutcome,
    TurnStatus,
)
from memory_core.settings import MemorySettings

__all__ = [
    "AGENT",
    "REPLY",
    "GatedExtractor",
    "Harness",
    "RecordingExtractor",
    "make_harness",
]

AGENT = "agent-1"
START = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
# A neutral assistant reply, long enough that a user line plus it passes the fallback
# admission threshold (2 messages, 160 visible characters) on its own.
REPLY = (
    "Understood, thank you for letting me know. Is there anything else I can help you with "
    "today, for example planning, writing, or questions about one of your projects?"
)


class RecordingExtractor:
    """Delegates, and records which entries each request carried (ids and order_seqs)."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.requests: list[ExtractionRequest] = []

    @property
    def name(self) -> str:
        return self.inner.name

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        self.requests.append(request)
        return await self.inner.extract(request, deadline=deadline, cancel=cancel)

    def order_seqs(self) -> list[list[int]]:
        return [[entry.order_seq for entry in request.entries] for request in self.requests]


class GatedExtractor(RecordingExtractor):
    """Holds every extraction at a gate the test opens; `entered` shows one is waiting."""

    def __init__(self, inner: Extractor) -> None:
        super().__init__(inner)
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        self.entered.set()
        await self.gate.wait()
        return await super().extract(request, deadline=deadline, cancel=cancel)


@attrs.define
class Harness:
    clock: ManualClock
    store: ApswClaimStore
    tape: EventTape
    cursors: InMemoryCursorStore
    coordinator: WriteCoordinator
    scheduler: AsyncioScheduler
    services: IngestionServices
    committed: list[tuple[str, tuple[str, ...]]]
    reports: list[IngestionReport]

    def close(self) -> None:
        self.store.close()

    def runtime(
        self, session_id: str = "s1", *, kind: SessionKind = SessionKind.MAIN
    ) -> IngestionRuntime:
        return IngestionRuntime(
            self.services, agent_id=AGENT, session_id=session_id, session_kind=kind
        )

    def say(self, session_id: str, user: str, reply: str = REPLY) -> None:
        self.tape.append_message(session_id, "user", user)
        self.tape.append_message(session_id, "assistant", reply)

    async def turn(
        self,
        runtime: IngestionRuntime,
        user: str,
        reply: str = REPLY,
        *,
        advance_seconds: float = 3_600,
        **outcome: object,
    ) -> IngestionReport:
        """One settled turn: time passes, the messages land on the tape, ingestion runs."""
        self.clock.advance(advance_seconds)
        self.say(runtime.session_id, user, reply)
        return await self.settle(runtime, **outcome)

    async def settle(self, runtime: IngestionRuntime, **outcome: object) -> IngestionReport:
        outcome.setdefault("status", TurnStatus.COMPLETED)
        handle = runtime.after_turn_settled(TurnOutcome(**outcome))  # type: ignore[arg-type]
        if handle is not None:
            await handle.wait()
        assert runtime.last_report is not None
        return runtime.last_report

    def claims(self, *, include_inactive: bool = False) -> Sequence[Claim]:
        return self.store.list_claims(AGENT, include_inactive=include_inactive, limit=1_000)

    def live(self, content: str) -> Claim:
        matches = [claim for claim in self.claims() if claim.content == content]
        assert len(matches) == 1, f"expected one live claim {content!r}, found {len(matches)}"
        return matches[0]


def make_harness(
    tmp_path: Path,
    *,
    extractor: Extractor | None = None,
    tape: EventTape | None = None,
    decisions: DecisionService | None = None,
    timezone: str = "Europe/Berlin",
    **settings: Any,
) -> Harness:
    """The ingestion services on a SQLite store; `settings` are `MemorySettings` fields."""
    chosen = MemorySettings(**settings)
    clock = ManualClock(START, timezone=timezone)
    policy_for_secrets = PatternSecretPolicy()
    store = ApswClaimStore(
        tmp_path / "memory.sqlite3",
        clock=clock,
        secret_policy=policy_for_secrets,
        synchronous="NORMAL",
    )
    tape = tape if tape is not None else InMemoryTape()
    scheduler = AsyncioScheduler()
    coordinator = WriteCoordinator(scheduler)
    coordinator.fences.configure(AGENT, "A")
    cursors = InMemoryCursorStore()
    committed: list[tuple[str, tuple[str, ...]]] = []

    reports: list[IngestionReport] = []

    def on_committed(agent_id: str, ids: tuple[str, ...]) -> None:
        committed.append((agent_id, ids))

    services = IngestionServices(
        extractor=extractor or RulesExtractor(secret_policy=policy_for_secrets),
        decisions=decisions or DecisionService(store, settings=chosen),
        tape=tape,
        projection=tape,
        anchors=tape,
        cursors=cursors,
        coordinator=coordinator,
        scheduler=scheduler,
        domain_clock=clock,
        infra_clock=clock,
        policy=IngestionPolicy.from_settings(chosen),
        on_committed=on_committed,
        on_report=reports.append,
    )
    return Harness(
        clock=clock,
        store=store,
        tape=tape,
        cursors=cursors,
        coordinator=coordinator,
        scheduler=scheduler,
        services=services,
        committed=committed,
        reports=reports,
    )
