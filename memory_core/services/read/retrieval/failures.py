"""How a failed source call ends or degrades a retrieval (fail-open, R-READ-1).

Degradations are recorded, never raised; a store call past the turn's deadline is a store
timeout like a vector-store one, and logs name the error's type only — messages may quote
content.
"""

from __future__ import annotations

import logging

from memory_core.domain.errors import (
    AgentMemoryError,
    ClearInProgress,
    DeadlineExceeded,
    OperationCancelled,
)
from memory_core.domain.manifest import Degradation
from memory_core.services.providers.gateway.service import QueryDegradation
from memory_core.services.read.retrieval.types import RetrievalOutcome

__all__ = ["QUERY_DEGRADATIONS", "store_degradation", "store_failure"]

log = logging.getLogger(__name__)


def store_failure(
    exc: AgentMemoryError, agent: str, degradations: set[Degradation]
) -> RetrievalOutcome:
    """How a failed store call ends the retrieval: fenced, cancelled, or failed (fail-open,
    the degradation recorded; a call past the deadline is a store timeout)."""
    if isinstance(exc, ClearInProgress):
        return RetrievalOutcome.FENCED
    if isinstance(exc, OperationCancelled):
        return RetrievalOutcome.CANCELLED
    log.warning("retrieval store failure for agent %s: %s", agent, type(exc).__name__)
    degradations.add(store_degradation(exc))
    return RetrievalOutcome.FAILED


def store_degradation(exc: AgentMemoryError) -> Degradation:
    """A store call past its deadline is a store timeout; any other failure a store error."""
    return (
        Degradation.STORE_TIMEOUT if isinstance(exc, DeadlineExceeded) else Degradation.STORE_ERROR
    )


QUERY_DEGRADATIONS = {
    QueryDegradation.TIMEOUT: Degradation.EMBEDDING_TIMEOUT,
    QueryDegradation.ERROR: Degradation.EMBEDDING_ERROR,
    QueryDegradation.CIRCUIT_OPEN: Degradation.EMBEDDING_CIRCUIT_OPEN,
    QueryDegradation.CANCELLED: Degradation.UNKNOWN,
}
