"""The vector index: embedding an agent's pending claims, and the coalesced drain that batches
them across turns and agents."""

from __future__ import annotations

import attrs

from memory_core.settings.fields import doc, non_negative, positive

__all__ = ["VectorSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class VectorSettings:
    embedding_pass_seconds: float = attrs.field(
        default=60.0,
        validator=positive,
        metadata=doc("Deadline of embedding an agent's pending claims, and of its warm-up."),
    )
    embedding_drain_batch_size: int = attrs.field(
        default=100,
        validator=[positive, attrs.validators.le(1_000)],
        metadata=doc(
            "Most claims one coalesced embedding batch takes, across turns and agents (1..1000)."
        ),
    )
    embedding_drain_delay_ms: int = attrs.field(
        default=250,
        validator=[non_negative, attrs.validators.le(10_000)],
        metadata=doc(
            "Longest wait for an embedding batch to fill after a commit (0..10000 ms); a new "
            "claim reaches vector recall within it plus the batches ahead of it."
        ),
    )
