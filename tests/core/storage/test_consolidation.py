"""The consolidation and persona rules (reference §8.3, §8.4, §8.6): the no-model rewording
rule, survivor fields, the decay/archive rule and the persona change ratio."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_core.domain.claims import Category, Claim, ClaimKind
from memory_core.storage.consolidation import is_near_exact, is_stale, merge_order, survivor_fields
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
