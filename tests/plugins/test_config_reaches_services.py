"""Every setting in the TOML file reaches the service that uses it (SPEC §11, no silent defaults).

Before, `open_memory` built the decision and ingestion services without their settings, so
`extraction_chunk_tokens`, `extraction_chunk_code_points` and `extracted_claim_max_code_points`
were documented and parsed but had no effect. The first test watches their effect end to end;
the second sets each other setting through the file and finds it on its consumer.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from memory_adapters.tapes import InMemoryTape
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.extraction import (
    CandidateClaim,
    ExtractionRequest,
    ExtractionResult,
    RejectionReason,
)
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_core.settings import MemorySettings
from memory_plugins.bootstrap import open_memory

A, S = "agent-a", "s1"
CAP = 300  # extracted_claim_max_code_points in the file below (default 2,000)


def _toml(tmp_path: Path, settings: dict[str, Any]) -> Path:
    # TOML spells booleans in lowercase; every other value here reads back from its repr.
    lines = "\n".join(
        f"{key} = {str(value).lower() if isinstance(value, bool) else repr(value)}"
        for key, value in settings.items()
    )
    path = tmp_path / "config.toml"
    path.write_text(
        textwrap.dedent(
            """
            [plugins.embedding_provider]
            name = "none"

            [settings]
            """
        )
        + lines
        + "\n",
        encoding="utf-8",
    )
    return path


def _text(length: int) -> str:
    """A plain sentence-like text of exactly `length` code points."""
    return ("tea " * length)[: length - 1] + "."


class CappedExtractor:
    """Records each request's entries; on the first it proposes one claim at the cap and
    one a code point over it."""

    name = "capped"

    def __init__(self) -> None:
        self.order_seqs: list[list[int]] = []

    async def extract(
        self, request: ExtractionRequest, *, deadline: Deadline, cancel: CancellationToken
    ) -> ExtractionResult:
        self.order_seqs.append([entry.order_seq for entry in request.entries])
        if len(self.order_seqs) > 1:
            return ExtractionResult()
        source = (request.entries[0].id,)
        return ExtractionResult(
            candidates=[
                CandidateClaim(content=_text(CAP), source_entry_ids=source),
                CandidateClaim(content=_text(CAP + 1), source_entry_ids=source),
            ]
        )


def test_chunking_and_the_claim_cap_follow_the_config_file(tmp_path: Path) -> None:
    """R-WRITE-1, SPEC §11: with 64 tokens / 256 code points per chunk, six 100-character
    messages ("User: " + 100 = 106 code points, ~27 tokens) pack two per chunk — the
    defaults (4,000 / 12,000) would take all six in one. With the claim cap at 300, a
    300-code-point candidate is stored and a 301 one refused as too large."""
    path = _toml(
        tmp_path,
        {
            "extraction_chunk_tokens": 64,
            "extraction_chunk_code_points": 256,
            "extracted_claim_max_code_points": CAP,
        },
    )
    tape = InMemoryTape()
    extractor = CappedExtractor()
    for index in range(6):
        tape.append_message(S, "user" if index % 2 == 0 else "assistant", chr(97 + index) * 100)

    async def go() -> None:
        memory = open_memory(
            tmp_path / "data",
            config=path,
            tape=tape,
            clock=ManualClock(),
            overrides={"extractor": extractor},
        )
        try:
            session = memory.session(A, S)
            session.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED, had_tool_use=True))
            await session.drain()
            report = session.last_ingestion
            assert report is not None
            stored = [claim.content for claim in memory.store.list_claims(A)]
            assert stored == [_text(CAP)]
            (first, *_) = report.chunks
            too_large = RejectionReason.CANDIDATE_TOO_LARGE.value
            assert first.report.rejected_count(too_large) == 1
        finally:
            await memory.aclose()

    asyncio.run(go())
    assert extractor.order_seqs == [[1, 2], [3, 4], [5, 6]]


# --- every other setting, observed on its consumer -----------------------------------------
Read = Callable[[MemoryService], object]


def _runtime(memory: MemoryService) -> Any:
    return memory.session(A, S)


def _of_runtime(name: str) -> Read:
    return lambda memory: getattr(_runtime(memory)._settings, name)


def _of_retrieval(name: str) -> Read:
    return lambda memory: getattr(memory.retrieval._settings, name)


def _of_scoring(name: str) -> Read:
    return lambda memory: getattr(memory.retrieval._scoring, name)


def _of_ingestion(name: str) -> Read:
    return lambda memory: getattr(memory._ingestion.policy, name)


def _of_maintenance(name: str) -> Read:
    return lambda memory: getattr(memory.maintenance._settings, name)


# setting -> (a valid non-default value, where its consumer holds it)
CONSUMERS: dict[str, tuple[object, Read]] = {
    # contribution: the session runtime hands its settings to `assemble` every turn
    "contribution_budget_tokens": (900, _of_runtime("contribution_budget_tokens")),
    "directive_ceiling_tokens": (400, _of_runtime("directive_ceiling_tokens")),
    "directive_item_tokens": (150, _of_runtime("directive_item_tokens")),
    "persona_floor_tokens": (100, _of_runtime("persona_floor_tokens")),
    "persona_ceiling_tokens": (300, _of_runtime("persona_ceiling_tokens")),
    "working_floor_tokens": (150, _of_runtime("working_floor_tokens")),
    "working_ceiling_tokens": (450, _of_runtime("working_ceiling_tokens")),
    "recall_reservation_tokens": (200, _of_runtime("recall_reservation_tokens")),
    "prepare_turn_deadline_ms": (3_000, _of_runtime("prepare_turn_deadline_ms")),
    "working_source_limit": (50, _of_runtime("working_source_limit")),
    "turn_cache_turns": (16, _of_runtime("turn_cache_turns")),
    "turn_bookkeeping_seconds": (10.0, _of_runtime("turn_bookkeeping_seconds")),
    "query_prefix_code_points": (4_000, _of_retrieval("query_prefix_code_points")),
    # retrieval and its scoring policy
    "top_k": (9, _of_retrieval("top_k")),
    "similarity_threshold": (0.3, _of_retrieval("similarity_threshold")),
    "refill_growth": (3, _of_retrieval("refill_growth")),
    "candidate_cap_per_source": (500, _of_retrieval("candidate_cap_per_source")),
    "vector_initial_limit": (200, _of_retrieval("vector_initial_limit")),
    "rrf_k": (5, _of_scoring("rrf_k")),
    "weight_similarity": (0.5, _of_scoring("weight_similarity")),
    "weight_recency": (0.3, _of_scoring("weight_recency")),
    "weight_importance": (0.2, _of_scoring("weight_importance")),
    "half_life_semantic_days": (7.0, _of_scoring("half_life_semantic_days")),
    "half_life_episodic_days": (20.0, _of_scoring("half_life_episodic_days")),
    "half_life_reflection_days": (90.0, _of_scoring("half_life_reflection_days")),
    "temporal_hard_filter_confidence": (
        0.7,
        lambda memory: memory.retrieval._scoring.temporal.hard_filter_confidence,
    ),
    "temporal_uncertain_factor": (
        0.5,
        lambda memory: memory.retrieval._scoring.temporal.uncertain_factor,
    ),
    # the provider gateway, its adaptive deadlines and breakers
    "query_deadline_floor_ms": (900, lambda memory: memory.gateway.deadlines._floor),
    "query_deadline_ceiling_ms": (2_500, lambda memory: memory.gateway.deadlines._ceiling),
    "latency_smoothing": (0.5, lambda memory: memory.gateway.deadlines._alpha),
    "latency_headroom": (2.0, lambda memory: memory.gateway.deadlines._headroom),
    "breaker_failure_threshold": (3, lambda memory: memory.gateway.breakers._threshold),
    "breaker_window_seconds": (20.0, lambda memory: memory.gateway.breakers._window),
    "breaker_open_seconds": (10.0, lambda memory: memory.gateway.breakers._open_for),
    "query_max_code_points": (1_000, lambda memory: memory.gateway._max_query_code_points),
    "embedding_batch_size": (20, lambda memory: memory.gateway._batch_size),
    "provider_dimension_seconds": (5.0, lambda memory: memory.gateway._timeouts.dimension_seconds),
    "embedding_batch_seconds": (10.0, lambda memory: memory.gateway._timeouts.batch_seconds),
    "embedding_warm_seconds": (10.0, lambda memory: memory.gateway._timeouts.warm_seconds),
    "text_call_seconds": (20.0, lambda memory: memory.gateway._timeouts.text_seconds),
    "provider_calls_per_key": (1, lambda memory: memory.gateway._calls._limits.per_key),
    "provider_calls_total": (8, lambda memory: memory.gateway._calls._limits.total),
    "latency_samples": (32, lambda memory: memory.gateway._calls._latencies.maxlen),
    # the facade's own operations
    "clear_batch_size": (100, lambda memory: memory.settings.clear_batch_size),
    "embedding_pass_seconds": (30.0, lambda memory: memory.settings.embedding_pass_seconds),
    "vector_clear_seconds": (10.0, lambda memory: memory.settings.vector_clear_seconds),
    # background ingestion and its decision step
    "ingestion_min_messages": (4, _of_ingestion("min_messages")),
    "ingestion_min_messages_with_text": (3, _of_ingestion("min_messages_with_text")),
    "ingestion_min_visible_chars": (100, _of_ingestion("min_visible_chars")),
    "ingestion_max_chunks_per_pass": (2, _of_ingestion("max_chunks_per_pass")),
    "ingestion_max_chunk_attempts": (5, _of_ingestion("max_chunk_attempts")),
    "tape_read_seconds": (2.0, _of_ingestion("read_seconds")),
    "extraction_seconds": (30.0, _of_ingestion("extraction_seconds")),
    "decision_seconds": (30.0, _of_ingestion("decision_seconds")),
    "anchor_seconds": (2.0, _of_ingestion("anchor_seconds")),
    "projection_cooldown_seconds": (10.0, _of_ingestion("projection_cooldown_seconds")),
    "decision_neighbours": (5, lambda memory: memory._ingestion.decisions._max_neighbours),
    "decision_max_batches": (1, lambda memory: memory._ingestion.decisions._max_batches),
    "decision_candidates_per_prompt": (
        2,
        lambda memory: memory._ingestion.decisions._per_prompt,
    ),
    "decision_known_code_points": (
        200,
        lambda memory: memory._ingestion.decisions._known_code_points,
    ),
    "decision_prompt_tokens": (8_000, lambda memory: memory._ingestion.decisions._prompt_tokens),
    # background maintenance: the service holds the settings it was built with
    "maintenance_arming_seconds": (30.0, _of_maintenance("maintenance_arming_seconds")),
    "maintenance_startup_delay_seconds": (
        120.0,
        _of_maintenance("maintenance_startup_delay_seconds"),
    ),
    "maintenance_stagger_seconds": (2.0, _of_maintenance("maintenance_stagger_seconds")),
    "maintenance_debounce_seconds": (60.0, _of_maintenance("maintenance_debounce_seconds")),
    "maintenance_heavy_cooldown_seconds": (
        3600.0,
        _of_maintenance("maintenance_heavy_cooldown_seconds"),
    ),
    "maintenance_failure_cooldown_seconds": (
        600.0,
        _of_maintenance("maintenance_failure_cooldown_seconds"),
    ),
    "maintenance_concurrency": (3, _of_maintenance("maintenance_concurrency")),
    "maintenance_llm_calls": (6, _of_maintenance("maintenance_llm_calls")),
    "maintenance_merge_llm_calls": (1, _of_maintenance("maintenance_merge_llm_calls")),
    "maintenance_challenge_llm_calls": (2, _of_maintenance("maintenance_challenge_llm_calls")),
    "maintenance_reflection_llm_calls": (0, _of_maintenance("maintenance_reflection_llm_calls")),
    "maintenance_persona_llm_calls": (0, _of_maintenance("maintenance_persona_llm_calls")),
    "reflection_min_claims": (4, _of_maintenance("reflection_min_claims")),
    "reflection_importance_sum": (3.0, _of_maintenance("reflection_importance_sum")),
    "reflection_inputs": (10, _of_maintenance("reflection_inputs")),
    "persona_evolution_enabled": (True, _of_maintenance("persona_evolution_enabled")),
    "maintenance_input_tokens": (12000, _of_maintenance("maintenance_input_tokens")),
    "maintenance_seed_batch": (32, _of_maintenance("maintenance_seed_batch")),
    "maintenance_neighbours": (4, _of_maintenance("maintenance_neighbours")),
    "merge_similarity_threshold": (0.9, _of_maintenance("merge_similarity_threshold")),
    "maintenance_archive_batch": (128, _of_maintenance("maintenance_archive_batch")),
    "audit_keep_per_agent": (5000, _of_maintenance("audit_keep_per_agent")),
    "audit_prune_batch": (250, _of_maintenance("audit_prune_batch")),
    "maintenance_pass_seconds": (60.0, _of_maintenance("maintenance_pass_seconds")),
    "maintenance_drain_seconds": (2.0, _of_maintenance("maintenance_drain_seconds")),
    # the coalesced embedding drain
    "embedding_drain_batch_size": (
        20,
        lambda memory: memory.embedding_drain._tunables.batch_size,
    ),
    "embedding_drain_delay_ms": (
        500,
        lambda memory: round(memory.embedding_drain._tunables.delay_seconds * 1000),
    ),
    # the stored working projection's background rebuilds
    "working_refresh_debounce_seconds": (0.5, lambda memory: memory.working._debounce),
    "working_refresh_seconds": (2.0, lambda memory: memory.working._seconds),
}
WATCHED_END_TO_END = {
    "extraction_chunk_tokens",
    "extraction_chunk_code_points",
    "extracted_claim_max_code_points",
    # tests/reliability/test_providers_responses.py: from the file to a refused answer
    "embedding_response_max_bytes",
    "text_response_max_bytes",
}


def test_every_setting_has_a_consumer_row() -> None:
    """A new setting needs its row here, so its wiring is tested the day it is added."""
    fields = {field.name for field in attrs.fields(MemorySettings)}
    assert set(CONSUMERS) == fields - WATCHED_END_TO_END


@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_a_setting_from_the_file_reaches_its_consumer(tmp_path: Path, name: str) -> None:
    """SPEC §11: the value in `[settings]` is the one the consuming service holds — not
    the default it would silently fall back to."""
    value, read = CONSUMERS[name]
    assert getattr(MemorySettings(), name) != value, "pick a value other than the default"
    path = _toml(tmp_path, {name: value})

    async def go() -> object:
        memory = open_memory(
            tmp_path / "data",
            config=path,
            tape=InMemoryTape(),
            clock=ManualClock(),
            overrides={"extractor": CappedExtractor()},
        )
        try:
            return read(memory)
        finally:
            await memory.aclose()

    assert asyncio.run(go()) == value
