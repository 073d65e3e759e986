"""`InMemoryClaimStore`: a deterministic, pure-Python ClaimStore for service tests.

It passes the same `ClaimStoreContract` as the apsw store (R-ARCH-5) and follows its rules
in the same order: ids, provenance keys and hash-only tombstones from
`memory_core.domain.provenance`, the tombstone check atomic with the insert, the secret
policy before every write, revision CAS, lineage, the clear fence, the directive rules.
Each port call is one transaction: a failure rolls the whole call back.

Where SQLite has no single answer to copy, the fake picks a deterministic one:
- ids come from a counter (`mem-00000001`, `dir-00000002`, …) unless `id_factory` is given;
- `search_fts` is a case-insensitive substring matcher over canonical content ranked by
  matched-term count, then importance, then newest, then id (not bm25, not trigrams);
- times are stored at millisecond precision, as the SQLite store keeps them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType

from memory_contracts import fake_claim_store_reads as reads
from memory_contracts import fake_claim_store_writes as writes
from memory_contracts.fake_claim_store_directives import DirectiveTable
from memory_contracts.fake_claim_store_table import ClaimTable, prepare, stored_time
from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingIdentity, WriteOrigin
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.errors import NotFound, StoreError
from memory_core.domain.provenance import TombstoneIdentity
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import (
    ClearProgress,
    DeleteOutcome,
    Derivation,
    FtsHit,
    InsertOutcome,
    MatchMode,
    RepairReport,
)
from memory_core.ports.clock import DomainClock
from memory_core.ports.secrets import SecretPolicy

__all__ = ["InMemoryClaimStore", "sequential_ids"]


def sequential_ids() -> Callable[[str], str]:
    """`prefix-00000001`, `prefix-00000002`, …: one counter for claims and directives, so
    ids are unique across both and tests can predict them."""
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}-{next(counter):08d}"


class InMemoryClaimStore:
    """`ClaimStore` over plain dicts: no I/O, no threads, deterministic.

    `clock` is optional: the port passes `now` to every call that stamps a row; the clock
    only dates tombstones written by clear batches, which take no `now`.
    """

    def __init__(
        self,
        *,
        secret_policy: SecretPolicy | None = None,
        clock: DomainClock | None = None,
        id_factory: Callable[[str], str] | None = None,
    ) -> None:
        self._policy: SecretPolicy = (
            PatternSecretPolicy() if secret_policy is None else secret_policy
        )
        self._clock = clock
        self._new_id = id_factory or sequential_ids()
        self._table = ClaimTable()
        self._directives = DirectiveTable(policy=self._policy, new_id=lambda: self._new_id("dir"))
        self._closed = False

    # --- plumbing ------------------------------------------------------------------------
    def _open(self) -> ClaimTable:
        if self._closed:
            raise StoreError("the claim store is closed")
        return self._table

    def _claim_id(self) -> str:
        return self._new_id("mem")

    def __enter__(self) -> InMemoryClaimStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def tombstones(self, agent_id: str) -> frozenset[TombstoneIdentity]:
        """Beyond the port, for tests: the owner's tombstone identities (hashes only)."""
        return self._open().tombstones(agent_id)

    # --- claims --------------------------------------------------------------------------
    def insert(self, draft: ClaimDraft, *, origin: WriteOrigin, now: datetime) -> InsertOutcome:
        return self.insert_many([draft], origin=origin, now=now)[0]

    def insert_many(
        self, drafts: Sequence[ClaimDraft], *, origin: WriteOrigin, now: datetime
    ) -> Sequence[InsertOutcome]:
        table = self._open()
        origin = WriteOrigin(origin)
        # The secret policy runs over the whole batch before anything is written.
        prepared = [prepare(draft, self._policy) for draft in drafts]
        at = stored_time(now)
        with table.transaction():
            return [
                writes.insert_prepared(table, item, origin=origin, now=at, new_id=self._claim_id)
                for item in prepared
            ]

    def get(self, agent_id: str, claim_id: str) -> Claim:
        claim = self._open().find(agent_id, claim_id)
        if claim is None:
            raise NotFound(f"no claim {claim_id} for this agent")
        return claim

    def list_claims(
        self,
        agent_id: str,
        *,
        scope_filter: ScopeFilter | None = None,
        include_inactive: bool = False,
        limit: int = 100,
        after_id: str | None = None,
    ) -> Sequence[Claim]:
        return reads.list_claims(
            self._open(),
            agent_id,
            scope_filter=scope_filter,
            include_inactive=include_inactive,
            limit=limit,
            after_id=after_id,
        )

    def update_content(
        self, agent_id: str, claim_id: str, *, expected_revision: int, content: str, now: datetime
    ) -> Claim:
        table = self._open()
        at = stored_time(now)
        with table.transaction():
            return writes.update_content(
                table,
                agent_id,
                claim_id,
                expected_revision=expected_revision,
                content=content,
                policy=self._policy,
                now=at,
                new_id=self._claim_id,
            )

    def supersede(
        self,
        agent_id: str,
        old_id: str,
        draft: ClaimDraft,
        *,
        expected_revision: int,
        now: datetime,
        origin: WriteOrigin = WriteOrigin.EXTRACTION,
    ) -> InsertOutcome:
        table = self._open()
        prepared = prepare(draft, self._policy)
        at = stored_time(now)
        with table.transaction():
            return writes.supersede(
                table,
                agent_id,
                old_id,
                prepared,
                expected_revision=expected_revision,
                origin=WriteOrigin(origin),
                now=at,
                new_id=self._claim_id,
            )

    def find_live_by_slot(self, agent_id: str, scope: Scope, slot: str) -> Claim | None:
        return reads.find_live_by_slot(self._open(), agent_id, scope, slot)

    def archive(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        table = self._open()
        at = stored_time(now)
        with table.transaction():
            return writes.archive(table, agent_id, claim_id, now=at)

    def restore(self, agent_id: str, claim_id: str, *, now: datetime) -> Claim:
        table = self._open()
        at = stored_time(now)
        with table.transaction():
            return writes.restore(table, agent_id, claim_id, now=at)

    def delete(self, agent_id: str, claim_id: str, *, now: datetime) -> DeleteOutcome:
        table = self._open()
        at = stored_time(now)
        with table.transaction():
            return writes.delete(table, agent_id, claim_id, now=at)

    # --- retrieval -----------------------------------------------------------------------
    def search_fts(
        self,
        agent_id: str,
        terms: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        limit: int,
        match_mode: MatchMode = MatchMode.ANY,
    ) -> Sequence[FtsHit]:
        return reads.search(
            self._open(),
            agent_id,
            terms,
            scope_filter=scope_filter,
            limit=limit,
            match_mode=MatchMode(match_mode),
        )

    def list_applicable_by_ids(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        embedding: EmbeddingIdentity | None = None,
        revisions: Mapping[str, int] | None = None,
    ) -> Sequence[Claim]:
        return reads.list_applicable_by_ids(
            self._open(),
            agent_id,
            claim_ids,
            scope_filter=scope_filter,
            embedding=embedding,
            revisions=revisions,
        )

    def record_access(self, agent_id: str, claim_ids: Sequence[str], *, now: datetime) -> int:
        table = self._open()
        at = stored_time(now)
        with table.transaction():
            return reads.record_access(table, agent_id, claim_ids, now=at)

    # --- embeddings ----------------------------------------------------------------------
    def list_pending_embeddings(self, agent_id: str, *, limit: int) -> Sequence[Claim]:
        return reads.list_pending_embeddings(self._open(), agent_id, limit=limit)

    def list_ready_ids(self, agent_id: str, identity: EmbeddingIdentity) -> Sequence[str]:
        """Ids of the owner's recallable claims READY with exactly `identity`, ascending;
        empty under a clear job."""
        return reads.list_ready_ids(self._open(), agent_id, identity)

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
        table = self._open()
        # `now` is unused: embedding state carries no time (the apsw store ignores it too).
        with table.transaction():
            return reads.mark_embedding(
                table,
                agent_id,
                claim_id,
                expected_revision=expected_revision,
                identity=identity,
                ready=ready,
            )

    def reset_embeddings(
        self, agent_id: str, claim_ids: Sequence[str] | None, *, now: datetime
    ) -> int:
        """Put those recallable claims — all of the owner's when `claim_ids` is None — back
        to PENDING with no identity, keeping revision and updated_at (embedding state is
        bookkeeping, as in `mark_embedding`). Returns how many rows changed; unknown,
        foreign, internal, archived and superseded ids are skipped. A no-op under a clear."""
        table = self._open()
        with table.transaction():
            return reads.reset_embeddings(table, agent_id, claim_ids)

    # --- directives ----------------------------------------------------------------------
    def create_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive:
        self._open()
        return self._directives.create(agent_id, kind, content, topic=topic, now=stored_time(now))

    def suggest_directive(
        self,
        agent_id: str,
        kind: DirectiveKind,
        content: str,
        *,
        topic: str | None = None,
        now: datetime,
    ) -> Directive | None:
        self._open()
        return self._directives.suggest(agent_id, kind, content, topic=topic, now=stored_time(now))

    def set_directive_status(
        self, agent_id: str, directive_id: str, status: DirectiveStatus, *, now: datetime
    ) -> Directive:
        self._open()
        return self._directives.set_status(agent_id, directive_id, status, now=stored_time(now))

    def list_directives(
        self, agent_id: str, *, status: DirectiveStatus | None = None
    ) -> Sequence[Directive]:
        self._open()
        return self._directives.list_directives(agent_id, status=status)

    # --- clear, retirement, lineage, repair ----------------------------------------------
    def begin_clear(self, agent_id: str, *, now: datetime) -> ClearProgress:
        table = self._open()
        at = stored_time(now)
        with table.transaction():
            return writes.begin_clear(table, agent_id, now=at)

    def run_clear_batch(
        self, agent_id: str, *, batch_size: int = writes.MAX_CLEAR_BATCH
    ) -> ClearProgress:
        table = self._open()
        now = None if self._clock is None else stored_time(self._clock.now())
        with table.transaction():
            return writes.run_clear_batch(table, agent_id, batch_size=batch_size, now=now)

    def finish_clear(self, agent_id: str) -> None:
        table = self._open()
        with table.transaction():
            writes.finish_clear(table, agent_id)

    def pending_clears(self) -> Sequence[ClearProgress]:
        return [job.progress() for job in self._open().jobs()]

    def retire_agent(self, agent_id: str) -> None:
        table = self._open()
        with table.transaction():
            table.drop_namespace(agent_id)
        # Directives go last: nothing after this can fail, so the namespace goes whole.
        self._directives.drop_namespace(agent_id)

    def list_derivations(self, agent_id: str, claim_id: str) -> Sequence[Derivation]:
        """Not fenced by a clear, as in the apsw store: lineage is not claim content."""
        return self._open().derivations(agent_id, claim_id)

    def prune_audit(self, *, older_than: datetime) -> int:
        """Always 0: the fake keeps no audit trail. The apsw store prunes only housekeeping
        events (repair reports), which a store whose `repair` is a no-op never records."""
        self._open()
        stored_time(older_than, "older_than")
        return 0

    def repair(self, *, now: datetime) -> RepairReport:
        """A no-op report. Repair fixes rows corrupted *outside* the API (raw SQL, a crash
        mid-migration); every row here was written through the API from validated domain
        values, so there is nothing to repair — and a valid row is never altered."""
        self._open()
        stored_time(now)
        return RepairReport()

    def checkpoint(self) -> None:
        """A no-op: nothing is written anywhere, so a forget is physical at once."""
        self._open()

    def close(self) -> None:
        """Idempotent; any later call raises StoreError, as on a closed connection."""
        self._closed = True
