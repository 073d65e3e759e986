"""The read path's role fakes, `FakeClaimSearch` and `FakeEmbeddingBookkeeping`. Search is a
case-insensitive substring match ranked by matched terms, importance, newest, id; `rank` is
minus the matched-term count, so lower is better as with bm25 (which this is not)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from memory_contracts.fake_claim_table import FakeStoreBase
from memory_core.domain.claims import Claim, EmbeddingIdentity, EmbeddingState
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import ScopeFilter
from memory_core.ports.claims import (
    CleanupSource,
    EmbeddingMark,
    FtsHit,
    MatchMode,
    PendingEmbedding,
    VectorCleanup,
)
from memory_core.storage.drafts import stored_time

__all__ = ["MAX_SEARCH_TERMS", "FakeClaimSearch", "FakeEmbeddingBookkeeping"]

MAX_SEARCH_TERMS = 32  # the SQL stores read at most this many terms, too


def _kept(claim: Claim | None) -> bool:
    """A cleanup's claim that keeps its vector: recallable and READY (fenced: not found)."""
    return (
        claim is not None and claim.is_recallable and claim.embedding_state is EmbeddingState.READY
    )


class FakeClaimSearch(FakeStoreBase):
    def search_fts(
        self,
        agent_id: str,
        terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        match_mode: MatchMode = MatchMode.ANY,
    ) -> Sequence[FtsHit]:
        # Terms are literal text: nothing is parsed, so quotes and operators stay text.
        cleaned = (term.strip().lower() for term in terms if isinstance(term, str))
        wanted = list(dict.fromkeys(term for term in cleaned if term))[:MAX_SEARCH_TERMS]
        need = len(wanted) if MatchMode(match_mode) is MatchMode.ALL else 1
        scored = [
            (sum(term in claim.canonical_content.lower() for term in wanted), claim)
            for claim in self._open().visible(agent_id, recallable=True, scope_filter=scope_filter)
        ]
        hits = [(count, c) for count, c in scored if wanted and count >= need]
        hits.sort(key=lambda h: (-h[0], -h[1].importance, -h[1].created_at.timestamp(), h[1].id))
        return [FtsHit(claim_id=c.id, rank=-float(count)) for count, c in hits[: max(limit, 0)]]

    def list_applicable_by_ids(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        embedding: EmbeddingIdentity | None = None,
        revisions: Mapping[str, int] | None = None,
    ) -> Sequence[Claim]:
        wanted = revisions or {}
        rows = self._open().recallable(agent_id, claim_ids)
        rows = [claim for claim in rows if scope_filter.admits(claim.scope)]
        if embedding is not None:
            rows = [claim for claim in rows if claim.is_ready_in(embedding)]
        return [claim for claim in rows if wanted.get(claim.id, claim.revision) == claim.revision]

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        table, at = self._open(), stored_time(now, "now")
        counted = table.recallable(agent_id, claim_ids)
        for claim in counted:
            last = claim.last_accessed_at
            seen = at if last is None else max(last, at)
            table.put(claim, access_count=claim.access_count + 1, last_accessed_at=seen)
        return len(counted)


class FakeEmbeddingBookkeeping(FakeStoreBase):
    def list_pending_embeddings(self, agent_id: str, *, limit: int) -> Sequence[PendingEmbedding]:
        rows = self._open().visible(agent_id, recallable=True)
        pending = [c for c in rows if c.embedding_state is EmbeddingState.PENDING]
        ordered = sorted(pending, key=lambda c: (c.created_at, c.id))[: max(limit, 0)]
        return [PendingEmbedding.of(claim) for claim in ordered]

    def list_ready_ids(self, agent_id: str, identity: EmbeddingIdentity) -> Sequence[str]:
        rows = self._open().visible(agent_id, recallable=True)
        return sorted(c.id for c in rows if c.is_ready_in(identity))

    def reset_embeddings(
        self, agent_id: str, claim_ids: Sequence[str] | None, *, now: datetime
    ) -> int:
        """Rows already pending with no identity are not counted, so a repeat returns 0."""
        table, blank = self._open(), (EmbeddingState.PENDING, None)
        ids = [c.id for c in table.visible(agent_id)] if claim_ids is None else claim_ids
        stale = [
            c for c in table.recallable(agent_id, ids) if (c.embedding_state, c.embedding) != blank
        ]
        for claim in stale:
            table.put(claim, embedding_state=EmbeddingState.PENDING, embedding=None)
        return len(stale)

    def mark_embedding(
        self,
        agent_id: str,
        claim_id: str,
        *,
        expected_revision: int,
        identity: EmbeddingIdentity | None,
        ready: bool,
        now: datetime,
    ) -> bool:
        """CAS on the revision. Archived and superseded rows may be marked (the SQL stores'
        UPDATE only excludes internal kinds), so a late completion is never an error."""
        if ready and identity is None:
            raise ValidationError("identity", "required to mark an embedding ready")
        claim = self._open().find(agent_id, claim_id)
        if claim is None or claim.kind.is_internal or claim.revision != expected_revision:
            return False
        failed = EmbeddingState.ERROR if identity is not None else EmbeddingState.FTS_ONLY
        state = EmbeddingState.READY if ready else failed
        self._open().put(claim, embedding_state=state, embedding=identity)
        return True

    def mark_embeddings(self, marks: Sequence[EmbeddingMark], *, now: datetime) -> Sequence[bool]:
        """In memory every call is atomic already; the batch is each mark in order."""
        return [
            self.mark_embedding(
                mark.agent_id,
                mark.claim_id,
                expected_revision=mark.expected_revision,
                identity=mark.identity,
                ready=mark.ready,
                now=now,
            )
            for mark in marks
        ]

    def queue_vector_cleanup(
        self, agent_id: str, claim_ids: Sequence[str], *, source: CleanupSource
    ) -> None:
        kind = CleanupSource(source).value
        self._open().cleanups.update((agent_id, claim_id, kind) for claim_id in claim_ids)

    def pending_vector_cleanups(
        self, agent_id: str | None = None, *, limit: int
    ) -> Sequence[VectorCleanup]:
        table = self._open()
        pairs = sorted({(o, c) for o, c, _ in table.cleanups if agent_id in (None, o)})
        return [
            VectorCleanup(
                agent_id=owner, claim_id=claim_id, keep=_kept(table.find(owner, claim_id))
            )
            for owner, claim_id in pairs[: max(limit, 0)]
        ]

    def finish_vector_cleanup(
        self, agent_id: str, claim_ids: Sequence[str], *, source: CleanupSource | None
    ) -> int:
        table, ids = self._open(), set(claim_ids)
        kinds = {s.value for s in CleanupSource} if source is None else {source.value}
        done = {row for row in table.cleanups if row[0] == agent_id and row[1] in ids}
        done = {row for row in done if row[2] in kinds}
        table.cleanups -= done
        return len(done)
