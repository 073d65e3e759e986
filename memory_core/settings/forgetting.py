"""Forgetting: the batch of an agent clear and the deadline of removing vectors
(R-FORGET-1, R-FORGET-3)."""

from __future__ import annotations

import attrs

from memory_core.settings.fields import doc, positive

__all__ = ["ForgettingSettings"]


# Not slotted: MemorySettings inherits every group, and only one base of a class may have slots.
@attrs.frozen(kw_only=True, slots=False)
class ForgettingSettings:
    clear_batch_size: int = attrs.field(
        default=256,
        validator=[positive, attrs.validators.le(256)],
        metadata=doc("Rows per agent-clear transaction (at most 256, R-FORGET-3)."),
    )
    vector_clear_seconds: float = attrs.field(
        default=30.0,
        validator=positive,
        metadata=doc(
            "Deadline of removing vectors: one claim's on delete or forget, an agent's on "
            "clear or retire."
        ),
    )
