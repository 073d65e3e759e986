"""Draft preparation once in the core (R-PRIV-1, R-DOM-3, R-WRITE-4): the secret policy runs
before any key is computed, internal rows get no tombstone identity, one working row per
agent, and validity bounds are cut to the stored precision."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from storage_support import T0, RedactingPolicy, make_claim, state

from memory_core.domain.claims import ClaimDraft
from memory_core.domain.errors import SecretRejected, ValidationError
from memory_core.domain.provenance import (
    canonical_content,
    provenance_key,
    tombstone_identities,
    working_provenance_key,
)
from memory_core.domain.scope import Scope
from memory_core.storage.drafts import (
    STORED_RESOLUTION,
    draft_of,
    prepare,
    stored_temporal,
    stored_time,
)


def _draft(content: str, **fields: object) -> ClaimDraft:
    return ClaimDraft(
        agent_id="agent-a", kind=fields.pop("kind", "semantic"), content=content, **fields
    )  # type: ignore[arg-type]


def test_keys_and_tombstones_are_computed_over_the_redacted_text() -> None:
    """R-PRIV-1 / R-WRITE-4: a redacted claim is suppressed by its redacted form's tombstone."""
    prepared = prepare(_draft("my key is sk-abcdef12"), RedactingPolicy())
    stored = "my key is [REDACTED:key]"
    assert prepared.content == stored
    assert prepared.canonical == canonical_content(stored)
    assert prepared.key == provenance_key("agent-a", "semantic", Scope.agent(), stored)
    assert prepared.identities == tombstone_identities(
        "agent-a", Scope.agent(), stored, prepared.key
    )


def test_a_rejecting_policy_refuses_before_anything_is_computed() -> None:
    with pytest.raises(SecretRejected):
        prepare(_draft("sk-abcdef12"), RedactingPolicy(reject=True))


def test_text_the_policy_empties_is_refused_naming_content() -> None:
    class Blanking(RedactingPolicy):
        def check_write(self, text: str, *, field: str = "content") -> str:
            return "   "

    with pytest.raises(ValidationError) as caught:
        prepare(_draft("anything"), Blanking())
    assert caught.value.field == "content"


def test_the_key_is_scoped_so_one_text_in_two_scopes_is_two_claims() -> None:
    """R-DOM-3."""
    agent = prepare(_draft("likes tea"), RedactingPolicy())
    project = prepare(_draft("likes tea", scope=Scope.project("p1")), RedactingPolicy())
    assert agent.key != project.key


def test_internal_rows_have_no_identity_and_working_rows_share_one_key() -> None:
    first = prepare(_draft("scratch one", kind="working"), RedactingPolicy())
    second = prepare(_draft("scratch two", kind="working"), RedactingPolicy())
    assert first.identities == () == second.identities
    assert first.key == second.key == working_provenance_key("agent-a")
    persona = prepare(_draft("is a helpful bot", kind="persona"), RedactingPolicy())
    assert persona.identities == ()


@settings(deadline=None)  # a loaded machine must not fail a pure rule
@given(st.datetimes(timezones=st.just(T0.tzinfo)))  # type: ignore[arg-type]
def test_stored_time_truncates_to_the_stored_resolution_and_is_idempotent(value) -> None:  # type: ignore[no-untyped-def]
    stored = stored_time(value)
    assert stored <= value < stored + STORED_RESOLUTION
    assert stored.microsecond % 1000 == 0
    assert stored_time(stored) == stored


def test_prepared_bounds_are_at_stored_precision_and_undated_metadata_is_kept() -> None:
    start = T0 + timedelta(microseconds=1_500)
    prepared = prepare(_draft("lives in Rome", temporal=state(start)), RedactingPolicy())
    assert prepared.temporal.interval.valid_from == T0 + timedelta(milliseconds=1)
    atemporal = _draft("likes tea").temporal
    assert stored_temporal(atemporal) is atemporal


def test_draft_of_a_claim_stores_it_again_with_the_edited_text() -> None:
    claim = make_claim(content="lives in Paris", slot="user.home_city", importance=0.8)
    draft = draft_of(claim, content="lives in Lyon")
    assert (draft.content, draft.slot, draft.importance) == ("lives in Lyon", "user.home_city", 0.8)
    assert draft_of(claim).content == "lives in Paris"
    again = prepare(draft_of(claim), RedactingPolicy())
    assert again.key == provenance_key("agent-a", "semantic", Scope.agent(), "lives in Paris")
