"""Supersede's checks and its successor decision once in the core (R-LINEAGE-1, R-SCOPE-3):
never across scopes, only at the revision read, only once; a retired twin is revived, an
archived or conflicted twin keeps the old row (the user's forget stands)."""

from __future__ import annotations

import pytest
from storage_support import make_claim

from memory_core.domain.claims import ClaimDraft, ClaimKind
from memory_core.domain.errors import RevisionConflict, ScopeError, ValidationError
from memory_core.domain.scope import Scope
from memory_core.storage.succession import (
    Successor,
    check_mutable,
    check_revision,
    check_supersede,
    decide_successor,
)


def _draft(scope: Scope | None = None) -> ClaimDraft:
    return ClaimDraft(
        agent_id="agent-a", kind="semantic", content="lives in Berlin", scope=scope or Scope.agent()
    )  # type: ignore[arg-type]


def test_supersede_never_crosses_scopes() -> None:
    """R-SCOPE-3."""
    with pytest.raises(ScopeError):
        check_supersede(make_claim(), _draft(Scope.project("p1")), expected_revision=1)


def test_supersede_needs_the_revision_it_read_and_an_unsuperseded_row() -> None:
    with pytest.raises(RevisionConflict, match="revision 2, not 1"):
        check_supersede(make_claim(revision=2), _draft(), expected_revision=1)
    with pytest.raises(RevisionConflict, match="already superseded"):
        check_supersede(make_claim(superseded_by="mem-9"), _draft(), expected_revision=1)
    check_supersede(make_claim(), _draft(), expected_revision=1)  # the valid case passes


def test_a_scope_error_is_reported_before_a_stale_revision() -> None:
    with pytest.raises(ScopeError):
        check_supersede(make_claim(revision=5), _draft(Scope.user("u1")), expected_revision=1)


@pytest.mark.parametrize("kind", [k for k in ClaimKind if k.is_internal])
def test_internal_rows_are_not_mutable(kind: ClaimKind) -> None:
    with pytest.raises(ValidationError) as caught:
        check_mutable(kind)
    assert caught.value.field == "kind"
    check_mutable(ClaimKind.SEMANTIC)


def test_check_revision_names_both_revisions() -> None:
    with pytest.raises(RevisionConflict, match="mem-1 is at revision 3, not 2"):
        check_revision("mem-1", 3, 2)
    check_revision("mem-1", 3, 3)


def test_no_twin_or_the_old_row_itself_means_insert_and_retire() -> None:
    for existing in (None, make_claim("mem-old")):
        decision = decide_successor("mem-old", existing)
        assert (decision.action, decision.retire_old) == (Successor.INSERT, True)


def test_a_retired_active_twin_is_revived() -> None:
    """R-LINEAGE-1: Paris → Berlin → Paris makes the first row live again."""
    twin = make_claim("mem-paris", superseded_by="mem-berlin")
    decision = decide_successor("mem-berlin", twin)
    assert (decision.action, decision.retire_old) == (Successor.REVIVE, True)


@pytest.mark.parametrize(
    ("fields", "retire"),
    [
        ({"lifecycle": "archived"}, False),  # the user's forget stands: the head is kept
        ({"lifecycle": "archived", "superseded_by": "mem-x"}, False),
        ({}, True),  # a live twin is the duplicate successor: the old row retires
    ],
)
def test_other_twins_are_kept_as_the_duplicate(fields: dict[str, object], retire: bool) -> None:
    decision = decide_successor("mem-old", make_claim("mem-twin", **fields))
    assert (decision.action, decision.retire_old) == (Successor.KEEP, retire)
