"""The state behind the claim-store role fakes, and the plumbing they share: flat dicts of
frozen values, so a transaction is a shallow snapshot put back on failure (the fakes'
`BEGIN … ROLLBACK`). The rules come from `memory_core.storage`, not from here."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import attrs

from memory_core.domain.claims import Claim
from memory_core.domain.directives import Directive
from memory_core.domain.errors import ClearInProgress, NotFound, StoreError
from memory_core.domain.provenance import TombstoneIdentity
from memory_core.domain.scope import ScopeFilter
from memory_core.domain.secrets import PatternSecretPolicy
from memory_core.ports.claims import ClearProgress, Derivation, DerivationKind
from memory_core.ports.clock import DomainClock
from memory_core.ports.secrets import SecretPolicy
from memory_core.storage.admission import Admission
from memory_core.storage.succession import check_mutable

__all__ = ["TABLES", "ClaimTable", "FakeStoreBase"]

TABLES = (
    "rows",
    "tombstones",
    "edges",
    "jobs",
    "directives",
    "dirty",
    "seen",
    "events",
    "conflicts",
    "personas",
)


class ClaimTable:
    """Rows by id (unique across owners, like a primary key) in insertion order, which
    clear batches walk; every other table is keyed by owner first."""

    def __init__(self) -> None:
        self.rows: dict[str, Claim] = {}
        self.tombstones: set[tuple[str, TombstoneIdentity]] = set()
        self.edges: dict[tuple[str, str, str, DerivationKind], Derivation] = {}
        self.jobs: dict[str, ClearProgress] = {}  # an owner's persisted clear job
        self.directives: dict[str, Directive] = {}
        # The consolidation queue and what it last saw of each row (`fake_maintenance`),
        # and the audit events maintenance reads back for its cooldowns.
        self.dirty: dict[tuple[str, str], Any] = {}
        self.seen: dict[tuple[str, str], Any] = {}
        self.events: dict[tuple[str, int], Any] = {}
        self.conflicts: dict[tuple[str, str], str] = {}  # (owner, challenger) -> target
        self.personas: dict[tuple[str, str], Any] = {}  # (owner, id) -> PersonaVersion
        # The vector-cleanup queue: (owner, claim id, source). Not in TABLES: no transaction
        # writes it beside other tables, and clear and retirement leave it, as in SQL.
        self.cleanups: set[tuple[str, str, str]] = set()

    @contextmanager
    def transaction(self) -> Iterator[ClaimTable]:
        saved = {name: copy.copy(getattr(self, name)) for name in TABLES}
        try:
            yield self
        except BaseException:
            self.__dict__.update(saved)
            raise

    def visible(
        self, agent_id: str, *, recallable: bool = False, scope_filter: ScopeFilter | None = None
    ) -> list[Claim]:
        """The owner's rows in insertion order (only recallable ones, only those in
        `scope_filter`, when asked); none while a clear fences them (R-FORGET-3)."""
        if agent_id in self.jobs:
            return []
        owned = (c for c in self.rows.values() if c.agent_id == agent_id)
        rows = [c for c in owned if c.is_recallable or not recallable]
        return [c for c in rows if scope_filter is None or scope_filter.admits(c.scope)]

    def recallable(self, agent_id: str, claim_ids: Sequence[str]) -> list[Claim]:
        """The owner's recallable rows among `claim_ids`, each once, in their order."""
        found = (self.find(agent_id, cid) for cid in dict.fromkeys(claim_ids))
        return [claim for claim in found if claim is not None and claim.is_recallable]

    def find(self, agent_id: str, claim_id: object) -> Claim | None:
        """The owner's row; a foreign id is indistinguishable from an unknown one."""
        claim = self.rows.get(claim_id) if isinstance(claim_id, str) else None
        if claim is None or claim.agent_id != agent_id or agent_id in self.jobs:
            return None
        return claim

    def owned(self, agent_id: str, claim_id: str) -> Claim:
        """The owner's non-internal row for a mutation: ClearInProgress first, so a fenced
        agent learns nothing; NotFound for unknown and foreign ids alike (R-PRIV-2)."""
        if agent_id in self.jobs:
            raise ClearInProgress("a clear job is pending for this agent")
        claim = self.find(agent_id, claim_id)
        if claim is None:
            raise NotFound(f"no claim {claim_id} for this agent")
        check_mutable(claim.kind)
        return claim

    def by_key(self, agent_id: str, key: str) -> Claim | None:
        """The owner's row of a provenance key, whatever its lifecycle (a unique index)."""
        rows = self.rows.values()
        return next((c for c in rows if (c.agent_id, c.provenance_key) == (agent_id, key)), None)

    def put(self, claim: Claim, **changes: object) -> Claim:
        self.rows[claim.id] = claim = attrs.evolve(claim, **changes)
        return claim

    def bump(self, claim: Claim, now: datetime, **changes: object) -> Claim:
        """A content or lifecycle change: revision+1, stamped `now`."""
        return self.put(claim, revision=claim.revision + 1, updated_at=now, **changes)

    def bury(self, agent_id: str, identities: Sequence[TombstoneIdentity]) -> int:
        """Write the identities' tombstones (hashes only, idempotent); how many were new."""
        new = {(agent_id, identity) for identity in identities} - self.tombstones
        self.tombstones |= new
        return len(new)

    def tombstoned(self, agent_id: str, identities: Sequence[TombstoneIdentity]) -> bool:
        return not self.tombstones.isdisjoint((agent_id, identity) for identity in identities)

    def release(
        self, agent_id: str, identities: Sequence[TombstoneIdentity], admission: Admission
    ) -> int:
        """Remove the tombstones a user's explicit add re-authorises (RELEASED); how many."""
        released = admission is Admission.RELEASED
        found = {(agent_id, i) for i in identities if released} & self.tombstones
        self.tombstones -= found
        return len(found)

    def derive(self, parent: Claim, child_id: str, kind: DerivationKind, now: datetime) -> None:
        """An idempotent lineage edge; a self-edge is meaningless and silently refused."""
        edge = Derivation(parent_id=parent.id, child_id=child_id, kind=kind, created_at=now)
        if parent.id != child_id:
            self.edges.setdefault((parent.agent_id, parent.id, child_id, kind), edge)

    def drop_owner(self, agent_id: str, *names: str) -> None:
        """Drop the owner's entries from the named tables."""
        for name in names:
            table = getattr(self, name)
            if isinstance(table, set):
                table.difference_update({key for key in table if key[0] == agent_id})
                continue
            for key in [k for k, v in table.items() if getattr(v, "agent_id", k[0]) == agent_id]:
                del table[key]


class FakeStoreBase:
    """What every role fake shares: the secret policy, ids, the tables, the closed flag.
    `clock` is accepted as the SQL stores take it, unused: every stamping call gets `now`."""

    def __init__(
        self,
        *,
        secret_policy: SecretPolicy | None = None,
        clock: DomainClock | None = None,
        id_factory: Callable[[str], str] | None = None,
    ) -> None:
        self._policy = PatternSecretPolicy() if secret_policy is None else secret_policy
        counter = itertools.count(1)  # one for claims and directives: unique across both
        self._new_id = id_factory or (lambda prefix: f"{prefix}-{next(counter):08d}")
        self._table = ClaimTable()
        self._closed = False

    def _open(self) -> ClaimTable:
        if self._closed:
            raise StoreError("the claim store is closed")
        return self._table

    def close(self) -> None:
        """Idempotent; any later call raises StoreError, as on a closed connection."""
        self._closed = True
