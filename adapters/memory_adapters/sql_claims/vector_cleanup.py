"""The durable vector-cleanup queue (R-FORGET-1, R-VEC-4): which claims' vectors must go
unless the claim is READY, queued before such a vector can exist and finished once its fate
is settled (`memory_core.ports.claims.embeddings`). Ids and an enum only: no content.

The rows are keyed by owner, claim id and source, and outlive clear and retirement on
purpose (`jobs.NAMESPACE_TABLES` leaves them): they are what finishes those vector phases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from memory_adapters.sql_claims.queries import NOT_FENCED, recallable
from memory_adapters.sql_claims.reads import distinct_ids
from memory_adapters.sql_claims.session import Session
from memory_core.ports.claims import CleanupSource, VectorCleanup

__all__ = ["TABLE_SQL", "VectorCleanupMethods", "finish", "pending", "queue"]

TABLE_SQL = """CREATE TABLE IF NOT EXISTS agent_memory_vector_cleanup (
  agent_id TEXT NOT NULL,
  claim_id TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('drain', 'forget', 'namespace')),
  PRIMARY KEY (agent_id, claim_id, source)
)"""

# The claim a row names, recallable and READY now (fenced by a clear: not kept).
_KEEP = f"""EXISTS (SELECT 1 FROM agent_memory AS m
    WHERE m.agent_id = c.agent_id AND m.id = c.claim_id AND {recallable("m.")}
      AND m.embedding_state = 'ready' AND {NOT_FENCED})"""


# Rows per INSERT: a statement per claim cost the drain ≈ 40 µs a claim; 3 parameters a
# row stays far below every driver's limit on bound parameters.
_QUEUE_ROWS = 256


def queue(session: Session, agent_id: str, claim_ids: Sequence[str], source: CleanupSource) -> None:
    ids, value = distinct_ids(claim_ids), CleanupSource(source).value
    for start in range(0, len(ids), _QUEUE_ROWS):
        chunk = ids[start : start + _QUEUE_ROWS]
        session.execute(
            "INSERT INTO agent_memory_vector_cleanup (agent_id, claim_id, source) VALUES "
            + ", ".join("(?, ?, ?)" for _ in chunk)
            + " ON CONFLICT DO NOTHING",
            [bound for claim_id in chunk for bound in (agent_id, claim_id, value)],
        )


def pending(session: Session, agent_id: str | None, limit: int) -> list[VectorCleanup]:
    where, params = ("WHERE c.agent_id = ?", [agent_id]) if agent_id is not None else ("", [])
    rows = session.execute(
        f"""SELECT c.agent_id, c.claim_id, {_KEEP}
              FROM (SELECT DISTINCT agent_id, claim_id FROM agent_memory_vector_cleanup) AS c
              {where} ORDER BY c.agent_id, c.claim_id LIMIT ?""",
        [*params, max(limit, 0)],
    )
    return [
        VectorCleanup(agent_id=owner, claim_id=claim_id, keep=bool(keep))
        for owner, claim_id, keep in rows
    ]


def finish(
    session: Session, agent_id: str, claim_ids: Sequence[str], source: CleanupSource | None
) -> int:
    ids = distinct_ids(claim_ids)
    if not ids:
        return 0
    where = f"agent_id = ? AND {session.dialect.id_list('claim_id')}"
    params: list[object] = [agent_id, ids]
    if source is not None:
        where += " AND source = ?"
        params.append(CleanupSource(source).value)
    return session.changed(f"DELETE FROM agent_memory_vector_cleanup WHERE {where}", params)


class VectorCleanupMethods:
    """The cleanup queue of `EmbeddingBookkeeping` over the concrete store's transactions."""

    _statement: Callable[[], AbstractContextManager[Session]]
    _read: Callable[[], AbstractContextManager[Session]]

    def queue_vector_cleanup(
        self, agent_id: str, claim_ids: Sequence[str], *, source: CleanupSource
    ) -> None:
        if not claim_ids:
            return
        with self._statement() as session:
            queue(session, agent_id, claim_ids, source)

    def pending_vector_cleanups(
        self, agent_id: str | None = None, *, limit: int
    ) -> Sequence[VectorCleanup]:
        with self._read() as session:
            return pending(session, agent_id, limit)

    def finish_vector_cleanup(
        self, agent_id: str, claim_ids: Sequence[str], *, source: CleanupSource | None
    ) -> int:
        with self._statement() as session:
            return finish(session, agent_id, claim_ids, source)
