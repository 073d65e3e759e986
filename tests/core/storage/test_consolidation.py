"""The consolidation and persona rules (reference §8.3, §8.4, §8.6): the no-model rewording
rule, survivor fields, the decay/archive rule and the persona change ratio."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from memory_core.domain.claims import Category, Claim, ClaimDraft, ClaimKind, Lifecycle
from memory_core.domain.errors import RevisionConflict, ValidationError
from memory_core.domain.scope import Scope
from memory_core.ports.claims import MergeRequest
from memory_core.storage.consolidation import (
    DEFER_STEP,
    check_merge,
    check_reflections,
    deferred_at,
    is_near_exact,
    is_stale,
    merge_order,
    stale_ids,
    survivor_fields,
)
from memory_core.storage.persona import change_ratio, needs_review, sanitise_persona

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _claim(claim_id: str, *, age_days: float, importance: float = 0.5, **fields: object) -> Claim:
    at = NOW - timedelta(days=age_days)
    return Claim(
        id=claim_id,
        agent_id="a",
        kind=ClaimKind.SEMANTIC,
        content="x",
        canonical_content="x",
        importance=importance,
        created_at=at,
        updated_at=at,
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("The user's cat is called Miso.", "The user's cat is named Miso.", True),
        ("The user likes green tea.", "the user likes green tea", True),
        ("The user walks the dog daily.", "The user walks the dog every day.", False),
        ("The user's cat is called Miso.", "The user's cat is called Luna.", False),
        ("The user has 3 cats at home.", "The user has 4 cats at home.", False),
        ("Likes tea.", "Loves tea.", False),  # too short to tell a wording from a meaning
        ("The user lives in Oslo now.", "The user lives in Oslo.", True),
    ],
)
def test_the_rewording_rule_merges_wordings_never_values(
    first: str, second: str, same: bool
) -> None:
    """§8.4: without a model only equal texts or one changed lowercase word merge."""
    assert is_near_exact(first, second) is same
    assert is_near_exact(second, first) is same


def test_the_newer_row_survives_with_the_higher_importance_and_more_confidence() -> None:
    old = _claim("m1", age_days=10, importance=0.9, category=Category.HEURISTIC)
    new = _claim("m2", age_days=1, importance=0.3, confidence=0.95)
    survivor, retired = merge_order(old, new)
    assert (survivor.id, retired.id) == ("m2", "m1")
    fields = survivor_fields(survivor, retired)
    assert (fields.importance, fields.category) == (0.9, Category.HEURISTIC)
    assert fields.confidence == 1.0  # 0.95 + 0.1, capped


@pytest.mark.parametrize(
    ("age_days", "importance", "accessed_days_ago", "stale"),
    [
        (140, 0.0, None, True),  # past 129.66 d at importance 0
        (120, 0.0, None, False),  # not decayed enough yet
        (200, 1.0, None, False),  # importance doubles the half-life: 259.3 d
        (300, 1.0, None, True),
        (200, 0.0, 10, False),  # a recent access resets the decay anchor
        (80, 0.0, None, False),  # never before 90 days, whatever the decay
    ],
)
def test_the_decay_rule(
    age_days: float, importance: float, accessed_days_ago: float | None, stale: bool
) -> None:
    accessed = None if accessed_days_ago is None else NOW - timedelta(days=accessed_days_ago)
    claim = _claim("m", age_days=age_days, importance=importance, last_accessed_at=accessed)
    assert is_stale(claim, NOW) is stale


def test_the_persona_change_ratio_and_review_flag() -> None:
    """§8.6: Levenshtein over the longer length; a large rewrite of an existing persona
    needs review, a first persona never does."""
    assert change_ratio("kitten", "sitting") == pytest.approx(3 / 7)
    assert change_ratio("same", "same") == 0.0
    assert needs_review(0.7, has_previous=True) and not needs_review(0.7, has_previous=False)
    assert not needs_review(0.6, has_previous=True)
    assert sanitise_persona("```markdown\nI am calm.\n```") == "I am calm."
    assert len(sanitise_persona("x" * 5_000)) == 1_500


def _request(survivor: Claim, retired: Claim) -> MergeRequest:
    return MergeRequest(
        survivor_id=survivor.id,
        survivor_revision=survivor.revision,
        retired_id=retired.id,
        retired_revision=retired.revision,
    )


def test_a_merge_joins_two_live_rows_read_at_their_revisions() -> None:
    new, old = _claim("n", age_days=1), _claim("o", age_days=2)
    assert check_merge(_request(new, old), new, old, challenged=()) == (new, old)


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ("same-row", ValidationError),
        ("gone", RevisionConflict),
        ("moved", RevisionConflict),
        ("archived", RevisionConflict),
        ("challenged", RevisionConflict),
        ("other-scope", ValidationError),
        ("other-kind", ValidationError),
    ],
)
def test_a_merge_refuses_a_pair_it_may_not_join(case: str, error: type[Exception]) -> None:
    """§8.4, §7.8: nothing changes for a pair that moved, is not live, is the target of
    an open challenge, or crosses a scope or a kind."""
    new, old = _claim("n", age_days=1), _claim("o", age_days=2)
    request, retired, challenged = _request(new, old), old, set[str]()
    if case == "same-row":
        request = _request(new, new)
    elif case == "gone":
        retired = None  # type: ignore[assignment]
    elif case == "moved":
        request = attrs.evolve(request, retired_revision=old.revision + 1)
    elif case == "archived":
        retired = attrs.evolve(old, lifecycle=Lifecycle.ARCHIVED)
    elif case == "challenged":
        challenged = {old.id}
    elif case == "other-scope":
        retired = attrs.evolve(old, scope=Scope.session("s1"))
    else:
        retired = attrs.evolve(old, kind=ClaimKind.EPISODIC)
    with pytest.raises(error):
        check_merge(request, new, retired, challenged=challenged)


def test_the_archive_step_takes_stale_rows_oldest_first_and_never_a_challenged_one() -> None:
    rows = [
        _claim("fresh", age_days=10),
        _claim("old", age_days=400, importance=0.0),
        _claim("older", age_days=500, importance=0.0),
        _claim("contested", age_days=600, importance=0.0),
    ]
    assert stale_ids(rows, NOW, challenged={"contested"}, limit=5) == ["older", "old"]
    assert stale_ids(rows, NOW, challenged=(), limit=1) == ["contested"]


def test_a_deferred_seed_goes_behind_the_newest_one() -> None:
    """§7.7, R-MAINT-1: max(now, newest + 1 ms), so a failing prefix never starves."""
    later = NOW + timedelta(seconds=5)
    assert deferred_at(NOW, [NOW - timedelta(days=1), later]) == later + DEFER_STEP
    assert deferred_at(NOW, [NOW - timedelta(days=1)]) == NOW
    assert deferred_at(NOW, []) == NOW


@pytest.mark.parametrize(
    ("agent_id", "kind", "field"),
    [("b", ClaimKind.REFLECTION, "agent_id"), ("a", ClaimKind.SEMANTIC, "kind")],
)
def test_an_insight_is_a_reflection_of_its_own_agent(
    agent_id: str, kind: ClaimKind, field: str
) -> None:
    """§8.5: a draft of another agent or kind is refused before anything is stored."""
    good = ClaimDraft(agent_id="a", kind=ClaimKind.REFLECTION, content="Likes quiet mornings.")
    check_reflections("a", [good])
    bad = attrs.evolve(good, agent_id=agent_id, kind=kind)
    with pytest.raises(ValidationError) as caught:
        check_reflections("a", [good, bad])
    assert caught.value.field == field
