"""MemorySettings: every tunable default in one place (SPEC §11).

Each field documents itself in its metadata (`doc`), which the configuration reference and
its drift test read. Values are validated on construction; the config file loader turns a
TOML table into this class and names any unknown key or wrong type.
"""

from __future__ import annotations

import attrs

from memory_core.domain.errors import ConfigError

__all__ = ["CHUNK_MIN_CODE_POINTS", "CHUNK_MIN_TOKENS", "MemorySettings"]

# Smallest chunk limits that always leave room for a label, a fragment number and one CJK
# character; the chunker relies on them, so the settings refuse anything smaller.
CHUNK_MIN_TOKENS = 16
CHUNK_MIN_CODE_POINTS = 64


def _doc(text: str) -> dict[str, str]:
    return {"doc": text}


_positive = attrs.validators.gt(0)
_non_negative = attrs.validators.ge(0)
_unit = [attrs.validators.ge(0.0), attrs.validators.le(1.0)]


@attrs.frozen(kw_only=True)
class MemorySettings:
    # --- contribution budget (R-READ-5) -----------------------------------------------
    contribution_budget_tokens: int = attrs.field(
        default=1_200,
        validator=[attrs.validators.ge(64), attrs.validators.le(8_000)],
        metadata=_doc("Total tokens of one turn's memory + directive contribution (64..8000)."),
    )
    directive_ceiling_tokens: int = attrs.field(
        default=512, validator=_non_negative, metadata=_doc("Most tokens directives may take.")
    )
    directive_item_tokens: int = attrs.field(
        default=192, validator=_positive, metadata=_doc("Most tokens one directive may take.")
    )
    persona_floor_tokens: int = attrs.field(
        default=128, validator=_non_negative, metadata=_doc("Tokens guaranteed to the self-model.")
    )
    persona_ceiling_tokens: int = attrs.field(
        default=320, validator=_non_negative, metadata=_doc("Most tokens the self-model may take.")
    )
    working_floor_tokens: int = attrs.field(
        default=192, validator=_non_negative, metadata=_doc("Tokens guaranteed to working memory.")
    )
    working_ceiling_tokens: int = attrs.field(
        default=480, validator=_non_negative, metadata=_doc("Most tokens working memory may take.")
    )
    recall_reservation_tokens: int = attrs.field(
        default=256,
        validator=_non_negative,
        metadata=_doc("Tokens reserved for query-recalled memories before borrowing."),
    )
    # --- retrieval (R-READ-4, R-READ-8) ------------------------------------------------
    top_k: int = attrs.field(
        default=6,
        validator=[_positive, attrs.validators.le(100)],
        metadata=_doc("Memories recalled per query (1..100)."),
    )
    rrf_k: int = attrs.field(
        # Measured, not DeepChat's 60: RRF is added to a base score, so only a small k lets
        # rank count (docs/evaluation.md: k=2 beats k=60 on LoCoMo and DeepChat's fixture).
        default=2,
        validator=[_positive, attrs.validators.le(1_000)],
        metadata=_doc("Reciprocal-rank-fusion constant (small: RRF adds to a base score)."),
    )
    weight_similarity: float = attrs.field(
        default=0.6, validator=_unit, metadata=_doc("Score weight of vector similarity.")
    )
    weight_recency: float = attrs.field(
        default=0.25, validator=_unit, metadata=_doc("Score weight of recency.")
    )
    weight_importance: float = attrs.field(
        default=0.15, validator=_unit, metadata=_doc("Score weight of importance.")
    )
    half_life_semantic_days: float = attrs.field(
        default=14.0, validator=_positive, metadata=_doc("Recency half-life of semantic claims.")
    )
    half_life_episodic_days: float = attrs.field(
        default=30.0, validator=_positive, metadata=_doc("Recency half-life of episodic claims.")
    )
    half_life_reflection_days: float = attrs.field(
        default=60.0, validator=_positive, metadata=_doc("Recency half-life of reflections.")
    )
    similarity_threshold: float = attrs.field(
        default=0.2,
        validator=_unit,
        metadata=_doc("Vector hits below this similarity are dropped."),
    )
    refill_growth: int = attrs.field(
        default=4,
        validator=attrs.validators.ge(2),
        metadata=_doc("Geometric growth of a source's candidate limit on refill."),
    )
    candidate_cap_per_source: int = attrs.field(
        default=800, validator=_positive, metadata=_doc("Hard cap of candidates per source.")
    )
    vector_initial_limit: int = attrs.field(
        default=400,
        validator=_positive,
        metadata=_doc("Cap of the first vector oversampling (before refills); 100 × 4."),
    )
    working_source_limit: int = attrs.field(
        default=200,
        validator=_positive,
        metadata=_doc("Newest agent-scope claims the working-memory projection considers."),
    )
    turn_cache_turns: int = attrs.field(
        default=128,
        validator=_positive,
        metadata=_doc("Contributions kept per session for retries and refreshes of a turn."),
    )
    # --- temporal policy (R-TIME-3) ----------------------------------------------------
    temporal_hard_filter_confidence: float = attrs.field(
        default=0.8,
        validator=_unit,
        metadata=_doc("States resolved at least this confidently are filtered when out of window."),
    )
    temporal_uncertain_factor: float = attrs.field(
        default=0.65,
        validator=_unit,
        metadata=_doc("Score factor of an out-of-window state resolved with low confidence."),
    )
    # --- provider gateway (R-PROV-1, R-PROV-2) -----------------------------------------
    query_deadline_floor_ms: int = attrs.field(
        default=800,
        validator=_positive,
        metadata=_doc("Lower clamp of the query-embedding deadline."),
    )
    query_deadline_ceiling_ms: int = attrs.field(
        default=2_000,
        validator=_positive,
        metadata=_doc("Upper clamp; also the relaxed deadline after a miss."),
    )
    latency_smoothing: float = attrs.field(
        default=0.25, validator=_unit, metadata=_doc("EWMA factor of observed embedding latency.")
    )
    latency_headroom: float = attrs.field(
        default=1.75,
        validator=attrs.validators.ge(1.0),
        metadata=_doc("Multiplier from smoothed latency to deadline."),
    )
    breaker_failure_threshold: int = attrs.field(
        default=2,
        validator=_positive,
        metadata=_doc("Failures within the window that open the breaker."),
    )
    breaker_window_seconds: float = attrs.field(
        default=30.0, validator=_positive, metadata=_doc("Window in which failures are counted.")
    )
    breaker_open_seconds: float = attrs.field(
        default=30.0, validator=_positive, metadata=_doc("Cooldown before one half-open probe.")
    )
    query_max_code_points: int = attrs.field(
        default=2_000,
        validator=_positive,
        metadata=_doc("Code points of the user message sent for query embedding (R-READ-2)."),
    )
    embedding_batch_size: int = attrs.field(
        default=50, validator=_positive, metadata=_doc("Texts per embedding request.")
    )
    provider_dimension_seconds: float = attrs.field(
        default=15.0,
        validator=_positive,
        metadata=_doc("Deadline of the call that learns an embedder's dimension."),
    )
    embedding_batch_seconds: float = attrs.field(
        default=30.0, validator=_positive, metadata=_doc("Deadline of one embedding batch.")
    )
    embedding_warm_seconds: float = attrs.field(
        default=30.0, validator=_positive, metadata=_doc("Deadline of an embedder warm-up call.")
    )
    text_call_seconds: float = attrs.field(
        default=60.0, validator=_positive, metadata=_doc("Deadline of one text-provider call.")
    )
    provider_calls_per_key: int = attrs.field(
        default=2,
        validator=_positive,
        metadata=_doc("Provider calls in flight per agent, purpose, provider and model."),
    )
    provider_calls_total: int = attrs.field(
        default=64, validator=_positive, metadata=_doc("Provider calls in flight in all.")
    )
    latency_samples: int = attrs.field(
        default=256,
        validator=_positive,
        metadata=_doc("Recent provider latencies kept for diagnostics."),
    )
    embedding_response_max_bytes: int = attrs.field(
        # 50 texts x 8,192 values x 40 bytes: room for the widest common models' full batch.
        default=16_777_216,
        validator=_positive,
        metadata=_doc(
            "Most bytes of one embedding answer; once the dimension is known, also at most "
            "64 bytes per expected value plus 64 KiB."
        ),
    )
    text_response_max_bytes: int = attrs.field(
        default=1_048_576,
        validator=_positive,
        metadata=_doc("Most bytes of one text-provider answer; reading stops there."),
    )
    # --- write path and forgetting -----------------------------------------------------
    clear_batch_size: int = attrs.field(
        default=256,
        validator=[_positive, attrs.validators.le(256)],
        metadata=_doc("Rows per agent-clear transaction (at most 256, R-FORGET-3)."),
    )
    embedding_pass_seconds: float = attrs.field(
        default=60.0,
        validator=_positive,
        metadata=_doc("Deadline of embedding an agent's pending claims, and of its warm-up."),
    )
    vector_clear_seconds: float = attrs.field(
        default=30.0,
        validator=_positive,
        metadata=_doc(
            "Deadline of removing vectors: one claim's on delete or forget, an agent's on "
            "clear or retire."
        ),
    )
    ingestion_min_messages: int = attrs.field(
        default=6,
        validator=_positive,
        metadata=_doc("New messages that admit an extraction pass on their own."),
    )
    ingestion_min_messages_with_text: int = attrs.field(
        default=2,
        validator=_positive,
        metadata=_doc("New messages that admit a pass together with enough visible text."),
    )
    ingestion_min_visible_chars: int = attrs.field(
        default=160,
        validator=_positive,
        metadata=_doc("Visible characters those fewer messages must hold."),
    )
    ingestion_max_chunks_per_pass: int = attrs.field(
        default=4,
        validator=_positive,
        metadata=_doc("Chunks one pass extracts; the chain continues the rest."),
    )
    ingestion_max_chunk_attempts: int = attrs.field(
        default=3,
        validator=_positive,
        metadata=_doc(
            "Refused extraction calls at one cursor position before its message is skipped."
        ),
    )
    tape_read_seconds: float = attrs.field(
        default=5.0, validator=_positive, metadata=_doc("Deadline of one tape or projection read.")
    )
    extraction_seconds: float = attrs.field(
        default=60.0, validator=_positive, metadata=_doc("Deadline of extracting one chunk.")
    )
    decision_seconds: float = attrs.field(
        default=60.0,
        validator=_positive,
        metadata=_doc("Deadline of deciding one chunk's candidates."),
    )
    anchor_seconds: float = attrs.field(
        default=5.0,
        validator=_positive,
        metadata=_doc("Deadline of appending one `memory/extract` anchor."),
    )
    projection_cooldown_seconds: float = attrs.field(
        default=30.0,
        validator=_positive,
        metadata=_doc("After a failed projection rebuild, read the tape for this long."),
    )
    decision_neighbours: int = attrs.field(
        default=3,
        validator=[_positive, attrs.validators.le(100)],
        metadata=_doc("Same-scope neighbours shown to the model per candidate (llm mode)."),
    )
    decision_max_batches: int = attrs.field(
        default=2,
        validator=_positive,
        metadata=_doc("Decision prompts per chunk; candidates beyond them are added."),
    )
    decision_candidates_per_prompt: int = attrs.field(
        default=4,
        validator=[_positive, attrs.validators.le(16)],
        metadata=_doc("Candidates decided together in one prompt (1..16)."),
    )
    decision_known_code_points: int = attrs.field(
        default=400,
        validator=_positive,
        metadata=_doc("Code points of each stored neighbour shown in a decision prompt."),
    )
    decision_prompt_tokens: int = attrs.field(
        default=12_000,
        validator=_positive,
        metadata=_doc(
            "Estimated input tokens of a decision prompt; neighbours are trimmed to fit."
        ),
    )
    extraction_chunk_tokens: int = attrs.field(
        default=4_000,
        validator=attrs.validators.ge(CHUNK_MIN_TOKENS),
        metadata=_doc(f"Estimated tokens per extraction chunk (>= {CHUNK_MIN_TOKENS})."),
    )
    extraction_chunk_code_points: int = attrs.field(
        default=12_000,
        validator=attrs.validators.ge(CHUNK_MIN_CODE_POINTS),
        metadata=_doc(f"Code points per extraction chunk (>= {CHUNK_MIN_CODE_POINTS})."),
    )
    extracted_claim_max_code_points: int = attrs.field(
        default=2_000,
        validator=_positive,
        metadata=_doc("Longest auto-extracted claim; longer candidates are rejected."),
    )
    prepare_turn_deadline_ms: int = attrs.field(
        default=4_000,
        validator=_positive,
        metadata=_doc("Soft deadline of a turn's contribution; past it the turn proceeds without."),
    )
    query_prefix_code_points: int = attrs.field(
        default=8_000,
        validator=_positive,
        metadata=_doc("Code points of a message, from its first visible one, that a query reads."),
    )
    turn_bookkeeping_seconds: float = attrs.field(
        default=30.0,
        validator=_positive,
        metadata=_doc("Deadline of a turn's view anchor and access count, which may outlive it."),
    )

    # --- background maintenance (R-MAINT-1/2, reference §8.3–8.4, §8.8) -----------------
    maintenance_arming_seconds: float = attrs.field(
        default=60.0,
        validator=_non_negative,
        metadata=_doc("After start, how long maintenance waits before arming its first passes."),
    )
    maintenance_startup_delay_seconds: float = attrs.field(
        default=300.0,
        validator=_non_negative,
        metadata=_doc("After arming, the delay of the first agent's startup pass."),
    )
    maintenance_stagger_seconds: float = attrs.field(
        default=5.0,
        validator=_non_negative,
        metadata=_doc("Extra delay of each further agent's startup pass."),
    )
    maintenance_debounce_seconds: float = attrs.field(
        default=300.0,
        validator=_non_negative,
        metadata=_doc("Quiet time after an agent's last write before its maintenance pass."),
    )
    maintenance_heavy_cooldown_seconds: float = attrs.field(
        default=21_600.0,
        validator=_non_negative,
        metadata=_doc("Least time between two completed heavy (model) passes of an agent."),
    )
    maintenance_failure_cooldown_seconds: float = attrs.field(
        default=1_800.0,
        validator=_non_negative,
        metadata=_doc("After a heavy pass whose every model call failed, heavy passes wait this."),
    )
    maintenance_concurrency: int = attrs.field(
        default=2,
        validator=[_positive, attrs.validators.le(64)],
        metadata=_doc("Agents whose maintenance passes may run at once (1..64)."),
    )
    maintenance_llm_calls: int = attrs.field(
        default=8,
        validator=_non_negative,
        metadata=_doc("Model calls one heavy pass may make in all."),
    )
    maintenance_merge_llm_calls: int = attrs.field(
        default=2,
        validator=_non_negative,
        metadata=_doc("Model calls one heavy pass may spend on merge decisions."),
    )
    maintenance_challenge_llm_calls: int = attrs.field(
        default=4,
        validator=_non_negative,
        metadata=_doc("Model calls one heavy pass may spend resolving conflicts."),
    )
    maintenance_reflection_llm_calls: int = attrs.field(
        default=1,
        validator=_non_negative,
        metadata=_doc("Model calls one heavy pass may spend on reflection."),
    )
    maintenance_persona_llm_calls: int = attrs.field(
        default=1,
        validator=_non_negative,
        metadata=_doc("Model calls one heavy pass may spend on a persona draft."),
    )
    maintenance_input_tokens: int = attrs.field(
        default=24_000,
        validator=_positive,
        metadata=_doc("Estimated input tokens one heavy pass may send to the model."),
    )
    maintenance_seed_batch: int = attrs.field(
        default=64,
        validator=[_positive, attrs.validators.le(256)],
        metadata=_doc("Dirty seeds one pass takes (1..256)."),
    )
    maintenance_neighbours: int = attrs.field(
        default=6,
        validator=[_positive, attrs.validators.le(64)],
        metadata=_doc("Same-agent vector neighbours read per seed when looking for a duplicate."),
    )
    merge_similarity_threshold: float = attrs.field(
        default=0.85,
        validator=_unit,
        metadata=_doc("Least cosine similarity of a neighbour considered for a merge."),
    )
    maintenance_archive_batch: int = attrs.field(
        default=256,
        validator=_positive,
        metadata=_doc("Stale claims one pass may archive."),
    )
    audit_keep_per_agent: int = attrs.field(
        default=10_000,
        validator=_non_negative,
        metadata=_doc("Newest operational audit events kept per agent."),
    )
    audit_prune_batch: int = attrs.field(
        default=500,
        validator=_positive,
        metadata=_doc("Operational audit events one pass may delete."),
    )
    maintenance_pass_seconds: float = attrs.field(
        default=120.0,
        validator=_positive,
        metadata=_doc("Deadline of one maintenance pass of one agent."),
    )
    reflection_min_claims: int = attrs.field(
        default=3,
        validator=_positive,
        metadata=_doc("Live Agent-scope claims reflection and persona drafts need at least."),
    )
    reflection_importance_sum: float = attrs.field(
        default=5.0,
        validator=_non_negative,
        metadata=_doc("Importance of claims newer than the watermark that triggers reflection."),
    )
    reflection_inputs: int = attrs.field(
        default=20,
        validator=[_positive, attrs.validators.le(200)],
        metadata=_doc("Most claims one reflection or persona prompt shows (1..200)."),
    )
    persona_evolution_enabled: bool = attrs.field(
        default=False,
        validator=attrs.validators.instance_of(bool),
        metadata=_doc(
            "Heavy passes draft self-model updates (a draft changes nothing until approved)."
        ),
    )
    maintenance_drain_seconds: float = attrs.field(
        default=5.0,
        validator=_positive,
        metadata=_doc("How long stopping maintenance waits for passes in flight before failing."),
    )
    embedding_drain_batch_size: int = attrs.field(
        default=100,
        validator=[_positive, attrs.validators.le(1_000)],
        metadata=_doc(
            "Most claims one coalesced embedding batch takes, across turns and agents (1..1000)."
        ),
    )
    embedding_drain_delay_ms: int = attrs.field(
        default=250,
        validator=[_non_negative, attrs.validators.le(10_000)],
        metadata=_doc(
            "Longest wait for an embedding batch to fill after a commit (0..10000 ms); a new "
            "claim reaches vector recall within it plus the batches ahead of it."
        ),
    )
    working_refresh_debounce_seconds: float = attrs.field(
        default=0.1,
        validator=_non_negative,
        metadata=_doc("Quiet time after an agent's writes before its projection is rebuilt."),
    )
    working_refresh_seconds: float = attrs.field(
        default=5.0,
        validator=_positive,
        metadata=_doc("Deadline of one background rebuild or store of a working projection."),
    )

    def __attrs_post_init__(self) -> None:
        pairs = (
            ("persona_floor_tokens", "persona_ceiling_tokens"),
            ("working_floor_tokens", "working_ceiling_tokens"),
            ("query_deadline_floor_ms", "query_deadline_ceiling_ms"),
        )
        for low, high in pairs:
            if getattr(self, low) > getattr(self, high):
                raise ConfigError(f"{low} must not exceed {high}")
        steps = (
            "maintenance_merge_llm_calls",
            "maintenance_challenge_llm_calls",
            "maintenance_reflection_llm_calls",
            "maintenance_persona_llm_calls",
        )
        for step in steps:
            if getattr(self, step) > self.maintenance_llm_calls:
                raise ConfigError(f"{step} must not exceed maintenance_llm_calls")
        if self.directive_item_tokens > self.directive_ceiling_tokens:
            raise ConfigError("directive_item_tokens must not exceed directive_ceiling_tokens")
