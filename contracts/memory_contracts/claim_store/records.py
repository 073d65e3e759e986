"""`ClaimRecordsContract`: the claim records roles (`ClaimReader`, `ClaimWriter`) — insert,
duplicates by scoped provenance, batches, and the secret policy on every claim write
(R-DOM-1, R-DOM-3, R-WRITE-4, R-PRIV-1)."""

from __future__ import annotations

import unicodedata
from datetime import timedelta
from typing import Protocol, runtime_checkable

import pytest

from memory_contracts.claim_store.base import EXTRACTION, USER_ADD, A, RoleCases, role_fixture
from memory_contracts.claim_store.support import (
    CONTRACT_EPOCH,
    SECRET_SAMPLE,
    claim_draft,
    full_source,
    state_temporal,
)
from memory_contracts.fakes import ManualClock
from memory_core.domain.claims import Category, EmbeddingState, Lifecycle
from memory_core.domain.errors import SecretRejected
from memory_core.domain.provenance import provenance_key
from memory_core.domain.scope import Scope
from memory_core.ports.claims import ClaimReader, ClaimWriter, InsertStatus

__all__ = ["ClaimRecordsContract", "RecordsStore"]


@runtime_checkable
class RecordsStore(ClaimReader, ClaimWriter, Protocol):
    """What the contract calls: its role, and the claim records that set cases up."""


class ClaimRecordsContract(RoleCases):
    """Inherit, implement `make_records_store`; pytest collects the cases."""

    records_store = role_fixture("records_store", "make_records_store", RecordsStore)

    def test_insert_round_trips_every_field(
        self, records_store: RecordsStore, clock: ManualClock
    ) -> None:
        """R-DOM-1, R-DOM-3, R-TIME-1: every field survives storage; the key is the scoped one."""
        temporal = state_temporal(CONTRACT_EPOCH - timedelta(days=3))
        scope = Scope.session("sess-1")
        draft = claim_draft(
            "User moved to Berlin",
            kind="semantic",
            scope=scope,
            temporal=temporal,
            category=Category.USER_PREFERENCE,
            importance=0.8,
            confidence=0.6,
            source=full_source(),
            slot="user.home_city",
        )
        outcome = records_store.insert(draft, origin=EXTRACTION, now=clock.now())
        assert outcome.status is InsertStatus.INSERTED and outcome.claim is not None
        stored = records_store.get(A, outcome.claim.id)
        assert stored == outcome.claim
        assert (stored.content, stored.scope, stored.temporal) == (draft.content, scope, temporal)
        assert (stored.category, stored.importance, stored.confidence) == (
            Category.USER_PREFERENCE,
            0.8,
            0.6,
        )
        assert stored.source == full_source() and stored.slot == "user.home_city"
        assert stored.provenance_key == provenance_key(A, "semantic", scope, draft.content)
        assert (stored.revision, stored.lifecycle, stored.embedding_state) == (
            1,
            Lifecycle.ACTIVE,
            EmbeddingState.PENDING,
        )
        assert stored.created_at == stored.updated_at == clock.now()

    def test_same_provenance_is_duplicate_and_stores_nothing(
        self, records_store: RecordsStore, clock: ManualClock
    ) -> None:
        """R-DOM-3: whitespace and NFC variants share the key; the existing row comes back."""
        first = self._add(records_store, clock, "Café opens at nine")
        variant = unicodedata.normalize("NFD", "  Café   opens at nine ")
        outcome = records_store.insert(claim_draft(variant), origin=EXTRACTION, now=clock.now())
        assert outcome.status is InsertStatus.DUPLICATE
        assert outcome.claim is not None and outcome.claim.id == first.id
        assert [c.id for c in records_store.list_claims(A)] == [first.id]

    def test_same_content_in_another_scope_is_an_independent_claim(
        self, records_store: RecordsStore, clock: ManualClock
    ) -> None:
        """R-SCOPE-3: one text may live independently in several scopes."""
        agent_row = self._add(records_store, clock, "Prefers tabs")
        session_row = self._add(records_store, clock, "Prefers tabs", scope=Scope.session("s1"))
        assert agent_row.id != session_row.id
        assert agent_row.provenance_key != session_row.provenance_key

    def test_insert_many_reports_each_draft_in_order(
        self, records_store: RecordsStore, clock: ManualClock
    ) -> None:
        """R-WRITE-4: a chunk's claims commit together; a repeat inside it is a duplicate."""
        outcomes = records_store.insert_many(
            [claim_draft("fact one"), claim_draft("fact two"), claim_draft("fact  one")],
            origin=EXTRACTION,
            now=clock.now(),
        )
        assert [o.status for o in outcomes] == [
            InsertStatus.INSERTED,
            InsertStatus.INSERTED,
            InsertStatus.DUPLICATE,
        ]
        assert outcomes[2].claim is not None and outcomes[0].claim is not None
        assert outcomes[2].claim.id == outcomes[0].claim.id

    def test_secret_content_is_refused_before_anything_is_stored(
        self, records_store: RecordsStore, clock: ManualClock
    ) -> None:
        """R-PRIV-1: the store applies its secret policy to every write, batch included."""
        with pytest.raises(SecretRejected):
            records_store.insert_many(
                [claim_draft("harmless"), claim_draft(f"key is {SECRET_SAMPLE}")],
                origin=USER_ADD,
                now=clock.now(),
            )
        assert records_store.list_claims(A) == []
