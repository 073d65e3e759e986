"""The state behind `InMemoryClaimStore`: claim rows with their indexes, hash-only tombstones,
lineage and clear jobs, plus an undo journal that makes each port call one transaction.

Only the fake's modules use this; it models the apsw tables closely enough that the same
`ClaimStoreContract` passes, not their SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import attrs

from memory_core.domain.claims import Claim, ClaimDraft, ClaimKind
from memory_core.domain.errors import ClearInProgress, StoreError, ValidationError
from memory_core.domain.provenance import (
    TombstoneIdentity,
    canonical_content,
    provenance_key,
    tombstone_identities,
    working_provenance_key,
)
from memory_core.domain.temporal import Interval, TemporalMetadata, require_utc
from memory_core.ports.claims import ClearPhase, ClearProgress, Derivation, DerivationKind
from memory_core.ports.secrets import SecretPolicy

__all__ = [
    "ClaimTable",
    "ClearJob",
    "PreparedDraft",
    "epoch_ms",
    "identities_of",
    "prepare",
    "stored_time",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def epoch_ms(value: datetime) -> int:
    return (value - _EPOCH) // _MS


def stored_time(value: datetime, field: str = "now") -> datetime:
    """`value` as the real store reads it back: aware UTC, truncated to milliseconds.

    Without the truncation a service test could pass here and fail on SQLite, which keeps
    epoch milliseconds.
    """
    return _EPOCH + epoch_ms(require_utc(value, field)) * _MS


def _stored_temporal(temporal: TemporalMetadata) -> TemporalMetadata:
    interval = temporal.interval
    if interval.is_undated:
        return temporal
    return attrs.evolve(
        temporal,
        interval=Interval(
            valid_from=None if interval.valid_from is None else stored_time(interval.valid_from),
            valid_until=None if interval.valid_until is None else stored_time(interval.valid_until),
        ),
    )


@attrs.frozen(kw_only=True)
class PreparedDraft:
    """A draft after the secret policy, with its identities and storage-precision temporal."""

    draft: ClaimDraft
    content: str
    canonical: str
    key: str
    identities: tuple[TombstoneIdentity, ...]
    temporal: TemporalMetadata


def prepare(draft: ClaimDraft, policy: SecretPolicy) -> PreparedDraft:
    """Apply the secret policy (R-PRIV-1) and compute the scoped provenance key (R-DOM-3).

    Keys and tombstones cover the text actually stored, so a redacted claim is suppressed
    by the tombstone of its redacted form — as in the apsw store.
    """
    content = policy.check_write(draft.content, field="content")
    if not content.strip():
        raise ValidationError("content", "nothing left to store after the secret policy")
    agent_id = draft.agent_id
    if draft.kind is ClaimKind.WORKING:
        key = working_provenance_key(agent_id)  # one working row per agent
    else:
        key = provenance_key(agent_id, draft.kind, draft.scope, content)
    identities = (
        () if draft.kind.is_internal else tombstone_identities(agent_id, draft.scope, content, key)
    )
    return PreparedDraft(
        draft=draft,
        content=content,
        canonical=canonical_content(content),
        key=key,
        identities=identities,
        temporal=_stored_temporal(draft.temporal),
    )


def identities_of(claim: Claim) -> tuple[TombstoneIdentity, ...]:
    """A stored row's tombstone identities: its provenance key and its normalised content."""
    return tombstone_identities(
        claim.agent_id, claim.scope, claim.canonical_content, claim.provenance_key
    )


@attrs.frozen(kw_only=True)
class ClearJob:
    agent_id: str
    created_at: datetime
    phase: ClearPhase = ClearPhase.CLAIMS
    removed_count: int = 0

    def progress(self, batch_removed: int = 0) -> ClearProgress:
        return ClearProgress(
            agent_id=self.agent_id,
            phase=self.phase,
            removed_count=self.removed_count,
            batch_removed=batch_removed,
            created_at=self.created_at,
        )


_EdgeKey = tuple[str, str, DerivationKind]


class ClaimTable:
    """Rows keyed by id (ids are unique across owners, as the SQLite UNIQUE index makes
    them), the per-owner provenance index, tombstones, lineage and clear jobs.

    Every mutation goes through a primitive that journals its inverse, so `transaction()`
    can roll a failed port call back whole — the fake's stand-in for `BEGIN … ROLLBACK`.
    """

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, Claim]] = {}  # agent → id → claim
        self._rids: dict[str, int] = {}  # id → insertion number; clear batches walk it
        self._next_rid = 1
        self._by_key: dict[tuple[str, str], str] = {}  # (agent, provenance key) → id
        self._tombstones: dict[str, dict[TombstoneIdentity, datetime]] = {}
        self._edges: dict[str, dict[_EdgeKey, Derivation]] = {}
        self._jobs: dict[str, ClearJob] = {}
        self._undo: list[Callable[[], None]] | None = None

    # --- transactions ----------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._undo is not None:  # nested: part of the enclosing transaction
            yield
            return
        self._undo = []
        try:
            yield
        except BaseException:
            for undo in reversed(self._undo):
                undo()
            raise
        finally:
            self._undo = None

    def _journal(self, undo: Callable[[], None]) -> None:
        if self._undo is not None:
            self._undo.append(undo)

    # --- claims -------------------------------------------------------------------------
    def fenced(self, agent_id: str) -> bool:
        return agent_id in self._jobs

    def ensure_not_fenced(self, agent_id: str) -> None:
        if agent_id in self._jobs:
            raise ClearInProgress("a clear job is pending for this agent")

    def find(self, agent_id: str, claim_id: object, *, fenced: bool = True) -> Claim | None:
        """The owner's row by id; a foreign id is indistinguishable from an unknown one."""
        if fenced and agent_id in self._jobs:
            return None
        return self._rows.get(agent_id, {}).get(claim_id) if isinstance(claim_id, str) else None

    def find_by_key(self, agent_id: str, key: str) -> Claim | None:
        claim_id = self._by_key.get((agent_id, key))
        return None if claim_id is None else self._rows[agent_id][claim_id]

    def visible(self, agent_id: str) -> list[Claim]:
        """The owner's rows in insertion order, or none while a clear fences them."""
        if agent_id in self._jobs:
            return []
        return list(self._rows.get(agent_id, {}).values())

    def oldest(self, agent_id: str, count: int) -> list[Claim]:
        rows = sorted(self._rows.get(agent_id, {}).values(), key=lambda c: self._rids[c.id])
        return rows[:count]

    def put(self, claim: Claim) -> None:
        """Insert a new row or replace the stored row of the same id."""
        rows = self._rows.setdefault(claim.agent_id, {})
        previous = rows.get(claim.id)
        if previous is None and claim.id in self._rids:
            raise StoreError(f"claim id {claim.id} is already taken")
        if claim.provenance_key is not None:
            # The unique (agent_id, provenance_key) index of the SQLite table.
            holder = self._by_key.get((claim.agent_id, claim.provenance_key))
            if holder not in (None, claim.id):
                raise StoreError(f"provenance of claim {claim.id} is already stored")
        if previous is None:
            self._rids[claim.id] = self._next_rid
            self._next_rid += 1
        self._unindex(previous)
        rows[claim.id] = claim
        self._index(claim)
        self._journal(lambda: self._revert_put(claim, previous))

    def _revert_put(self, claim: Claim, previous: Claim | None) -> None:
        self._unindex(claim)
        if previous is None:
            del self._rows[claim.agent_id][claim.id]
            del self._rids[claim.id]
        else:
            self._rows[claim.agent_id][claim.id] = previous
            self._index(previous)

    def remove(self, claim: Claim) -> None:
        rid = self._rids.pop(claim.id)
        del self._rows[claim.agent_id][claim.id]
        self._unindex(claim)
        self._journal(lambda: self._revert_remove(claim, rid))

    def _revert_remove(self, claim: Claim, rid: int) -> None:
        self._rows.setdefault(claim.agent_id, {})[claim.id] = claim
        self._rids[claim.id] = rid
        self._index(claim)

    def _index(self, claim: Claim) -> None:
        if claim.provenance_key is not None:
            self._by_key[(claim.agent_id, claim.provenance_key)] = claim.id

    def _unindex(self, claim: Claim | None) -> None:
        if claim is not None and claim.provenance_key is not None:
            self._by_key.pop((claim.agent_id, claim.provenance_key), None)

    # --- tombstones (hash only) ---------------------------------------------------------
    def tombstones(self, agent_id: str) -> frozenset[TombstoneIdentity]:
        return frozenset(self._tombstones.get(agent_id, {}))

    def matching(self, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
        stored = self._tombstones.get(agent_id, {})
        return sum(identity in stored for identity in identities)

    def write_tombstones(
        self, agent_id: str, identities: Sequence[TombstoneIdentity], *, now: datetime
    ) -> int:
        """Idempotent; returns how many were new."""
        stored = self._tombstones.setdefault(agent_id, {})
        new = [identity for identity in dict.fromkeys(identities) if identity not in stored]
        for identity in new:
            stored[identity] = now
        self._journal(lambda: [stored.pop(identity, None) for identity in new])
        return len(new)

    def release(self, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
        stored = self._tombstones.get(agent_id, {})
        released = {i: stored.pop(i) for i in dict.fromkeys(identities) if i in stored}
        self._journal(lambda: stored.update(released))
        return len(released)

    # --- lineage ------------------------------------------------------------------------
    def add_derivation(
        self, agent_id: str, *, parent: str, child: str, kind: DerivationKind, now: datetime
    ) -> None:
        """Idempotent edge; a self-edge is meaningless and silently refused."""
        edges = self._edges.setdefault(agent_id, {})
        key = (parent, child, kind)
        if parent == child or key in edges:
            return
        edges[key] = Derivation(parent_id=parent, child_id=child, kind=kind, created_at=now)
        self._journal(lambda: edges.pop(key, None))

    def derivations(self, agent_id: str, claim_id: str) -> list[Derivation]:
        found = [
            edge
            for edge in self._edges.get(agent_id, {}).values()
            if claim_id in (edge.parent_id, edge.child_id)
        ]
        return sorted(found, key=lambda e: (e.created_at, e.parent_id, e.child_id))

    def drop_derivations(self, agent_id: str) -> None:
        dropped = self._edges.pop(agent_id, None)
        if dropped is not None:
            self._journal(lambda: self._edges.__setitem__(agent_id, dropped))

    # --- clear jobs and namespaces ------------------------------------------------------
    def job(self, agent_id: str) -> ClearJob | None:
        return self._jobs.get(agent_id)

    def jobs(self) -> list[ClearJob]:
        return sorted(self._jobs.values(), key=lambda j: (j.created_at, j.agent_id))

    def set_job(self, agent_id: str, job: ClearJob | None) -> None:
        previous = self._jobs.pop(agent_id, None)
        if job is not None:
            self._jobs[agent_id] = job
        self._journal(lambda: self._restore_job(agent_id, previous))

    def _restore_job(self, agent_id: str, job: ClearJob | None) -> None:
        self._jobs.pop(agent_id, None)
        if job is not None:
            self._jobs[agent_id] = job

    def drop_namespace(self, agent_id: str) -> None:
        """Claims, tombstones, lineage and the clear job of one owner (R-FORGET-4)."""
        for claim in list(self._rows.get(agent_id, {}).values()):
            self.remove(claim)
        self._rows.pop(agent_id, None)
        tombstones = self._tombstones.pop(agent_id, None)
        if tombstones is not None:
            self._journal(lambda: self._tombstones.__setitem__(agent_id, tombstones))
        self.drop_derivations(agent_id)
        self.set_job(agent_id, None)
