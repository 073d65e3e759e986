"""Write-path liveness through the public API (R-WRITE-1, R-WRITE-6): a long message is
extracted to the end, fragment by fragment and across a restart; a chunk the model always
refuses is given up after a bounded number of attempts; two agents on one conversation each
extract it. The default (SQLite) cursor store is used throughout, so progress is durable."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_adapters.extractors import RulesExtractor
from memory_adapters.tapes.memory import InMemoryTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.errors import ProviderResponseError, ProviderUnavailable
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.extraction import ExtractionRequest, ExtractionResult
from memory_core.ports.tape import Anchor, AnchorKind, EntryRole, TapeEntry
from memory_core.services.write import chunking
from memory_core.services.write.chunking import ChunkLimits, chunk_messages
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.api import open_memory

AGENT, OTHER, SESSION = "agent-a", "agent-b", "s1"
SETTLED = TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True)
REFUSED = "please refuse this chunk"


class RecordingTape(InMemoryTape):
    """Keeps the anchors it is asked to append, to read their payloads back."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[Anchor] = []

    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        self.anchors.append(anchor)
        return await super().append(anchor, deadline=deadline, cancel=cancel)

    def extracts(self, agent_id: str = AGENT) -> list[dict[str, object]]:
        return [
            dict(a.payload)
            for a in self.anchors
            if a.kind is AnchorKind.EXTRACT and a.agent_id == agent_id
        ]


class ScriptedExtractor:
    """The rules extractor, except: it records every request's text, refuses (an unusable
    answer) any chunk holding REFUSED, and fails (an outage) after `outage_after` calls."""

    name = "scripted"

    def __init__(self, *, outage_after: int | None = None, ceiling: int = 1_000) -> None:
        self.inner = RulesExtractor(secret_policy=PatternSecretPolicy())
        self.texts: list[str] = []
        self.outage_after = outage_after
        self.ceiling = ceiling  # a loop that never ends is cut short, and fails the test

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        await asyncio.sleep(0)  # a real provider call yields to the loop
        if len(self.texts) >= self.ceiling or (
            self.outage_after is not None and len(self.texts) >= self.outage_after
        ):
            raise ProviderUnavailable("scripted outage")
        self.texts.append("".join(entry.content for entry in request.entries))
        if any(REFUSED in entry.content for entry in request.entries):
            raise ProviderResponseError("extraction response unusable: missing-json")
        return await self.inner.extract(request, deadline=deadline, cancel=cancel)


def _open(tmp_path: Path, tape: InMemoryTape, extractor: ScriptedExtractor, **settings: object):  # type: ignore[no-untyped-def]
    from memory_core.settings import MemorySettings
    from memory_plugins.config import MemoryConfig

    config = MemoryConfig(settings=MemorySettings(**settings))  # type: ignore[arg-type]
    return open_memory(
        tmp_path / "data",
        config=config,
        tape=tape,
        clock=ManualClock(),
        overrides={"extractor": extractor},
    )


def _long_message(code_points: int) -> str:
    words = (f"w{n:06d}" for n in range(code_points // 8 + 1))
    return " ".join(words)[:code_points]


def test_a_one_megabyte_message_is_extracted_to_the_end_once(tmp_path: Path) -> None:
    """R-WRITE-1: fragments of one message make progress across passes; each code point is
    sent to the model exactly once and the session's cursor passes the message."""
    content = _long_message(1_000_000)

    async def go() -> None:
        tape, extractor = RecordingTape(), ScriptedExtractor()
        memory = _open(tmp_path, tape, extractor)
        tape.append_message(SESSION, "user", content)
        tape.append_message(SESSION, "assistant", "That is a long paste.")
        session = memory.session(AGENT, SESSION)
        assert session.after_turn_settled(SETTLED)
        await session.drain()
        sent = "".join(extractor.texts)
        assert len(sent) == len(content) + len("That is a long paste.")
        assert sent.startswith(content)
        fragments = [p["fragmentOffset"] for p in tape.extracts() if p["fragmentOffset"]]
        assert fragments == sorted(fragments) and len(fragments) == len(extractor.texts) - 1
        assert memory._ingestion.cursors.get(AGENT, SESSION) == 2
        await memory.aclose()

    asyncio.run(go())


def test_a_restart_resumes_the_long_message_where_it_stopped(tmp_path: Path) -> None:
    """R-WRITE-1: the fragment position is durable: after an outage and a reopen, extraction
    continues at the next fragment, and nothing is sent twice."""
    content = _long_message(200_000)

    async def go() -> None:
        tape = RecordingTape()
        tape.append_message(SESSION, "user", content)
        tape.append_message(SESSION, "assistant", "Noted.")
        first = ScriptedExtractor(outage_after=6)
        memory = _open(tmp_path, tape, first)
        session = memory.session(AGENT, SESSION)
        session.after_turn_settled(SETTLED)
        await session.drain()
        assert len(first.texts) == 6
        await memory.aclose()

        second = ScriptedExtractor()
        memory = _open(tmp_path, tape, second)
        session = memory.session(AGENT, SESSION)
        session.after_turn_settled(SETTLED)
        await session.drain()
        assert "".join(first.texts + second.texts) == content + "Noted."
        await memory.aclose()

    asyncio.run(go())


def test_a_pass_chunks_a_bounded_prefix_of_a_long_message(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """R-WRITE-1: the per-character work of one pass is bounded by its chunk budget, not by
    the length of the message (counted as weight look-ups, not timed)."""
    looked_up = 0
    real = chunking.is_cjk_like

    def counting(char: str) -> bool:
        nonlocal looked_up
        looked_up += 1
        return real(char)

    monkeypatch.setattr(chunking, "is_cjk_like", counting)
    limits = ChunkLimits(max_tokens=4_000, max_code_points=12_000)
    entry = TapeEntry(
        id="m1", session_id=SESSION, order_seq=1, role=EntryRole.USER,
        content=_long_message(1_000_000),
    )  # fmt: skip
    chunks = chunk_messages([entry], limits, max_chunks=4)
    assert len(chunks) == 5 and chunks[-1].resume is not None
    assert looked_up <= 5 * 3 * limits.max_code_points


def test_a_chunk_refused_on_every_attempt_is_given_up_and_later_turns_extract(
    tmp_path: Path,
) -> None:
    """R-WRITE-6: the messages packed with a refused one are still extracted; the refused
    message gets bounded attempts, then a terminal outcome in its `memory/extract` anchor (a
    type name and a count, no content); the cursor passes it; later turns extract."""

    def said(*lines: str) -> None:
        for line in lines:
            tape.append_message(SESSION, "user", line)
            tape.append_message(SESSION, "assistant", "Noted.")

    def contents() -> set[str]:
        return {c.content for c in memory.store.list_claims(AGENT)}

    async def go() -> None:
        turns = 0
        while not [p for p in tape.extracts() if "skipped" in p]:
            turns += 1
            # The default bound is 3 refused calls at one position; the turn that isolates
            # the refused message moves the position once, so one more turn at most.
            assert turns <= 4
            session.after_turn_settled(SETTLED)
            await session.drain()
        assert {"The user's name is Ana.", "The user lives in Lisbon."} <= contents()
        refused = [text for text in extractor.texts if REFUSED in text]
        assert len(refused) >= 3 and refused[-1] == f"Hello, {REFUSED}."
        (skipped,) = [p for p in tape.extracts() if "skipped" in p]
        assert skipped["skipped"]["error"] == "ProviderResponseError"
        assert skipped["skipped"]["attempts"] >= 3
        assert skipped["cursorAdvanced"] is True and REFUSED not in repr(skipped)

        said("I moved to Berlin last month.")
        session.after_turn_settled(SETTLED)
        await session.drain()
        assert "The user lives in Berlin." in contents()
        assert len([text for text in extractor.texts if REFUSED in text]) == len(refused)
        await memory.aclose()

    tape, extractor = RecordingTape(), ScriptedExtractor()
    memory = _open(tmp_path, tape, extractor)
    session = memory.session(AGENT, SESSION)
    said("Hi! My name is Ana.", f"Hello, {REFUSED}.", "I moved to Lisbon last year.")
    asyncio.run(go())


def test_an_outage_never_counts_as_a_refusal(tmp_path: Path) -> None:
    """R-WRITE-6: only a refused answer is counted; a provider outage leaves the cursor."""

    async def go() -> None:
        tape, extractor = RecordingTape(), ScriptedExtractor(outage_after=0)
        memory = _open(tmp_path, tape, extractor, ingestion_max_chunk_attempts=1)
        session = memory.session(AGENT, SESSION)
        tape.append_message(SESSION, "user", "I moved to Lisbon last year.")
        tape.append_message(SESSION, "assistant", "Lisbon is lovely.")
        for _ in range(3):
            session.after_turn_settled(SETTLED)
            await session.drain()
        assert memory._ingestion.cursors.get(AGENT, SESSION) == 0
        assert not [p for p in tape.extracts() if "skipped" in p]
        await memory.aclose()

    asyncio.run(go())


def test_a_second_agent_on_the_same_conversation_extracts_it_too(tmp_path: Path) -> None:
    """R-WRITE-1: cursors are per (agent, session): the first agent's progress does not
    stand for the second's."""

    async def go() -> None:
        tape = RecordingTape()
        memory = _open(tmp_path, tape, ScriptedExtractor())
        tape.append_message(SESSION, "user", "I moved to Lisbon last year.")
        tape.append_message(SESSION, "assistant", "Lisbon is lovely.")
        for agent in (AGENT, OTHER):
            session = memory.session(agent, SESSION)
            assert session.after_turn_settled(SETTLED)
            await session.drain()
        for agent in (AGENT, OTHER):
            contents = [c.content for c in memory.store.list_claims(agent)]
            assert contents == ["The user lives in Lisbon."], agent
        await memory.aclose()

    asyncio.run(go())
