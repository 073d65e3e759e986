"""Tombstone identities of stored rows once in the core (R-FORGET-1): from raw columns, and
a row whose scope is unreadable is tombstoned by its Agent-scope content identity."""

from __future__ import annotations

from storage_support import make_claim

from memory_core.domain.provenance import TombstoneKind, tombstone_identities
from memory_core.domain.scope import Scope
from memory_core.storage.tombstones import identities_of_claim, stored_identities


def test_a_valid_row_has_its_provenance_and_content_identities() -> None:
    found = stored_identities(
        "agent-a", scope_type="project", scope_id="p1", canonical="likes tea", provenance="key-1"
    )
    assert found == tombstone_identities("agent-a", Scope.project("p1"), "likes tea", "key-1")
    assert {identity.kind for identity in found} == {
        TombstoneKind.PROVENANCE,
        TombstoneKind.CONTENT,
    }


def test_an_unreadable_scope_falls_back_to_the_agent_content_identity() -> None:
    found = stored_identities(
        "agent-a", scope_type="project", scope_id=None, canonical="likes tea", provenance=None
    )
    assert found == tombstone_identities("agent-a", Scope.agent(), "likes tea", None)
    # The exact content identity and the folded one, both `content` rows.
    assert [identity.kind for identity in found] == [TombstoneKind.CONTENT] * 2


def test_non_text_columns_never_raise() -> None:
    found = stored_identities("agent-a", scope_type=3, scope_id=4, canonical=5, provenance=6)
    assert found == tombstone_identities("agent-a", Scope.agent(), "5", None)


def test_a_claims_identities_are_its_stored_rows() -> None:
    claim = make_claim(provenance_key="key-9", scope=Scope.user("u1"))
    assert identities_of_claim(claim) == stored_identities(
        "agent-a",
        scope_type="user",
        scope_id="u1",
        canonical=claim.canonical_content,
        provenance="key-9",
    )
