"""Ingestion: when an extraction pass is admitted, how the tape is chunked, and how the
chunk's candidates are extracted and decided against what is stored (R-WRITE-1)."""

from __future__ import annotations

import attrs

from memory_core.settings.fields import doc, positive

__all__ = ["CHUNK_MIN_CODE_POINTS", "CHUNK_MIN_TOKENS", "IngestionSettings"]

# Smallest chunk limits that always leave room for a label, a fragment number and one CJK
# character; the chunker relies on them, so the settings refuse anything smaller.
CHUNK_MIN_TOKENS = 16
CHUNK_MIN_CODE_POINTS = 64


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class IngestionSettings:
    ingestion_min_messages: int = attrs.field(
        default=6,
        validator=positive,
        metadata=doc("New messages that admit an extraction pass on their own."),
    )
    ingestion_min_messages_with_text: int = attrs.field(
        default=2,
        validator=positive,
        metadata=doc("New messages that admit a pass together with enough visible text."),
    )
    ingestion_min_visible_chars: int = attrs.field(
        default=160,
        validator=positive,
        metadata=doc("Visible characters those fewer messages must hold."),
    )
    ingestion_max_chunks_per_pass: int = attrs.field(
        default=4,
        validator=positive,
        metadata=doc("Chunks one pass extracts; the chain continues the rest."),
    )
    ingestion_max_chunk_attempts: int = attrs.field(
        default=3,
        validator=positive,
        metadata=doc(
            "Refused extraction calls at one cursor position before its message is skipped."
        ),
    )
    tape_read_seconds: float = attrs.field(
        default=5.0, validator=positive, metadata=doc("Deadline of one tape or projection read.")
    )
    extraction_seconds: float = attrs.field(
        default=60.0, validator=positive, metadata=doc("Deadline of extracting one chunk.")
    )
    anchor_seconds: float = attrs.field(
        default=5.0,
        validator=positive,
        metadata=doc("Deadline of appending one `memory/extract` anchor."),
    )
    projection_cooldown_seconds: float = attrs.field(
        default=30.0,
        validator=positive,
        metadata=doc("After a failed projection rebuild, read the tape for this long."),
    )
    extraction_chunk_tokens: int = attrs.field(
        default=4_000,
        validator=attrs.validators.ge(CHUNK_MIN_TOKENS),
        metadata=doc(f"Estimated tokens per extraction chunk (>= {CHUNK_MIN_TOKENS})."),
    )
    extraction_chunk_code_points: int = attrs.field(
        default=12_000,
        validator=attrs.validators.ge(CHUNK_MIN_CODE_POINTS),
        metadata=doc(f"Code points per extraction chunk (>= {CHUNK_MIN_CODE_POINTS})."),
    )
    extracted_claim_max_code_points: int = attrs.field(
        default=2_000,
        validator=positive,
        metadata=doc("Longest auto-extracted claim; longer candidates are rejected."),
    )
    decision_seconds: float = attrs.field(
        default=60.0,
        validator=positive,
        metadata=doc("Deadline of deciding one chunk's candidates."),
    )
    decision_neighbours: int = attrs.field(
        default=3,
        validator=[positive, attrs.validators.le(100)],
        metadata=doc("Same-scope neighbours shown to the model per candidate (llm mode)."),
    )
    decision_max_batches: int = attrs.field(
        default=2,
        validator=positive,
        metadata=doc("Decision prompts per chunk; candidates beyond them are added."),
    )
    decision_candidates_per_prompt: int = attrs.field(
        default=4,
        validator=[positive, attrs.validators.le(16)],
        metadata=doc("Candidates decided together in one prompt (1..16)."),
    )
    decision_known_code_points: int = attrs.field(
        default=400,
        validator=positive,
        metadata=doc("Code points of each stored neighbour shown in a decision prompt."),
    )
    decision_prompt_tokens: int = attrs.field(
        default=12_000,
        validator=positive,
        metadata=doc("Estimated input tokens of a decision prompt; neighbours are trimmed to fit."),
    )
