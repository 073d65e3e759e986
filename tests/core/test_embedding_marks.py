"""`EmbeddingMark`, the value a drain batch records: a ready mark names its model (R-VEC-4)."""

from __future__ import annotations

import pytest

from memory_core.domain.claims import EmbeddingIdentity
from memory_core.domain.errors import ValidationError
from memory_core.ports.claims import EmbeddingMark

IDENTITY = EmbeddingIdentity(provider="fake", model="m1", dim=8)


@pytest.mark.parametrize(
    ("identity", "ready"), [(IDENTITY, True), (IDENTITY, False), (None, False)]
)
def test_a_mark_is_ready_with_an_identity_or_not_ready(
    identity: EmbeddingIdentity | None, ready: bool
) -> None:
    mark = EmbeddingMark(
        agent_id="a", claim_id="mem-1", expected_revision=1, identity=identity, ready=ready
    )
    assert (mark.identity, mark.ready) == (identity, ready)


def test_a_ready_mark_without_an_identity_is_refused() -> None:
    """R-VEC-4: a ready vector of no known model would enter the ready set of every model;
    the batch is refused whole, before any write."""
    with pytest.raises(ValidationError, match="identity"):
        EmbeddingMark(
            agent_id="a", claim_id="mem-1", expected_revision=1, identity=None, ready=True
        )
