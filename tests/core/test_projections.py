"""The working-memory projection: fixed sections, stable order, round-robin budget (R-READ-9)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.domain.claims import Claim, ClaimKind, Lifecycle
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import Interval, Precision, TemporalKind, TemporalMetadata
from memory_core.domain.temporal_policy import (
    TemporalMode,
    TemporalPolicy,
    TemporalStatus,
    WorkingSection,
    assess,
    working_section_for,
)
from memory_core.domain.tokens import estimate_tokens
from memory_core.services.read import projections
from memory_core.services.read.projections import project_working
from memory_core.settings import MemorySettings

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
BUDGET = 400  # tokens; the runtime passes the settings' working_ceiling_tokens
POLICY = TemporalPolicy.from_settings(MemorySettings())


def temporal(
    kind: TemporalKind,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    confidence: float = 0.9,
) -> TemporalMetadata:
    return TemporalMetadata(
        kind=kind,
        interval=Interval(valid_from=start, valid_until=end),
        precision=Precision.DAY,
        timezone="UTC",
        confidence=confidence,
    )


def claim(
    claim_id: str,
    content: str | None = None,
    *,
    kind: ClaimKind = ClaimKind.SEMANTIC,
    meta: TemporalMetadata | None = None,
    importance: float = 0.5,
    access_count: int = 0,
    created: datetime = NOW - 10 * DAY,
    **extra: object,
) -> Claim:
    return Claim(
        id=claim_id,
        agent_id="agent",
        kind=kind,
        content=content or f"fact {claim_id}",
        canonical_content=content or f"fact {claim_id}",
        importance=importance,
        access_count=access_count,
        created_at=created,
        updated_at=created,
        **({"temporal": meta} if meta else {}),
        **extra,
    )


ONE_PER_SECTION = [
    claim("refl", "Tends to plan ahead", kind=ClaimKind.REFLECTION),
    claim("plan", "Trip to Kyoto", meta=temporal(TemporalKind.PLAN, start=NOW + 5 * DAY)),
    claim(
        "event",
        "Ran a marathon",
        kind=ClaimKind.EPISODIC,
        meta=temporal(TemporalKind.EVENT, start=NOW - 3 * DAY),
    ),
    claim("fact", "Prefers green tea"),
    claim(
        "qual",
        "Works at Acme",
        meta=temporal(TemporalKind.STATE, confidence=0.5),  # undated: qualified
    ),
    claim("state", "Lives in Lyon", meta=temporal(TemporalKind.STATE, start=NOW - 9 * DAY)),
]


def test_sections_render_in_the_fixed_order_with_labels_and_annotations() -> None:
    """R-READ-9: current state, stable facts, recent events, plans, reflections — in that order."""
    projection = project_working(ONE_PER_SECTION, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    text = projection.text or ""
    labels = [line for line in text.split("\n") if line.startswith("[") and line.endswith("]")]
    assert labels == [f"[{section.value}]" for section in WorkingSection]
    assert [e.section for e in projection.entries] == list(WorkingSection)
    assert "- Prefers green tea\n\n[Recent events]" in text
    assert "- Lives in Lyon [Temporal: current state; from 2026-05-23 (UTC)]" in text
    assert "- Works at Acme [Temporal: state with unspecified validity" in text
    assert "confidence 0.50]" in text  # the qualified state says how unsure it is
    assert projection.estimated_tokens == estimate_tokens(text)
    assert projection.omitted == 0


def test_ineligible_and_non_projected_claims_are_left_out() -> None:
    """R-TIME-3 / R-MAINT-3: high-confidence expired states, other scopes, archived, internal."""
    claims = [
        claim("expired", meta=temporal(TemporalKind.STATE, start=NOW - 9 * DAY, end=NOW - DAY)),
        claim("session", scope=Scope.session("s1")),
        claim("archived", lifecycle=Lifecycle.ARCHIVED),
        claim("superseded", superseded_by="x"),
        claim("persona", kind=ClaimKind.PERSONA),
        claim("kept"),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert [e.id for e in projection.entries] == ["kept"]


def test_qualified_states_sort_current_undated_expired_future() -> None:
    low = 0.5
    claims = [
        claim("future", meta=temporal(TemporalKind.STATE, start=NOW + DAY, confidence=low)),
        claim("expired", meta=temporal(TemporalKind.STATE, end=NOW - DAY, confidence=low)),
        claim("undated", meta=temporal(TemporalKind.STATE, confidence=0.95)),
        claim("current", meta=temporal(TemporalKind.STATE, start=NOW - DAY, confidence=low)),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert [e.id for e in projection.entries] == ["current", "undated", "expired", "future"]
    assert {e.section for e in projection.entries} == {WorkingSection.QUALIFIED_STATES}


def test_recent_events_newest_first() -> None:
    events = [
        claim(
            f"e{days}",
            kind=ClaimKind.EPISODIC,
            meta=temporal(TemporalKind.EVENT, start=NOW - days * DAY),
        )
        for days in (9, 1, 5)
    ]
    projection = project_working(events, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert [e.id for e in projection.entries] == ["e1", "e5", "e9"]


def test_plans_by_status_upcoming_soonest_first_lapsed_latest_first() -> None:
    plan, recurring = TemporalKind.PLAN, TemporalKind.RECURRING
    claims = [
        claim("ended", meta=temporal(recurring, start=NOW - 90 * DAY, end=NOW - 30 * DAY)),
        claim("lapsed_old", meta=temporal(plan, start=NOW - 20 * DAY, end=NOW - 19 * DAY)),
        claim("lapsed_new", meta=temporal(plan, start=NOW - 5 * DAY, end=NOW - 4 * DAY)),
        claim("weekly", meta=temporal(recurring, start=NOW - 9 * DAY)),
        claim("recur_later", meta=temporal(recurring, start=NOW + 9 * DAY)),
        claim("future_event", meta=temporal(TemporalKind.EVENT, start=NOW + 2 * DAY)),
        claim("plan_far", meta=temporal(plan, start=NOW + 30 * DAY)),
        claim("plan_soon", meta=temporal(plan, start=NOW + 3 * DAY)),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert [e.id for e in projection.entries] == [
        "plan_soon",
        "plan_far",
        "future_event",
        "weekly",
        "recur_later",
        "lapsed_new",
        "lapsed_old",
        "ended",
    ]
    assert projection.entries[-1].status is TemporalStatus.ENDED_RECURRENCE


def test_ties_break_by_importance_access_recency_then_id() -> None:
    claims = [
        claim("b", importance=0.5),
        claim("a", importance=0.5),
        claim("newer", importance=0.5, created=NOW - DAY),
        claim("used", importance=0.5, access_count=3),
        claim("vital", importance=0.9),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert [e.id for e in projection.entries] == ["vital", "used", "newer", "a", "b"]


def test_round_robin_keeps_a_busy_section_from_starving_the_others() -> None:
    facts = [claim(f"f{i:02d}", f"stable fact number {i} " * 3, importance=0.9) for i in range(40)]
    reflection = claim("r", "Learns by doing", kind=ClaimKind.REFLECTION, importance=0.1)
    projection = project_working([*facts, reflection], now=NOW, budget_tokens=120, policy=POLICY)
    ids = [e.id for e in projection.entries]
    assert "r" in ids
    assert ids[0] == "f00"
    assert projection.omitted > 0
    assert projection.estimated_tokens <= 120


def test_a_line_that_does_not_fit_is_skipped_and_a_shorter_later_one_may_fit() -> None:
    claims = [
        claim("long", "x" * 2000, importance=0.9),
        claim("short", "tea", importance=0.1),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=50, policy=POLICY)
    assert [e.id for e in projection.entries] == ["short"]
    assert projection.omitted == 1


def test_multi_line_content_is_indented_under_its_bullet() -> None:
    projection = project_working(
        [claim("m", "first line\nsecond line")], now=NOW, budget_tokens=BUDGET, policy=POLICY
    )
    assert "- first line\n  second line" in (projection.text or "")


def test_next_refresh_is_the_earliest_future_boundary_even_of_hidden_claims() -> None:
    claims = [
        claim("future", meta=temporal(TemporalKind.STATE, start=NOW + 2 * DAY)),  # hidden now
        claim("ending", meta=temporal(TemporalKind.STATE, start=NOW - DAY, end=NOW + 5 * DAY)),
        claim("past", meta=temporal(TemporalKind.EVENT, start=NOW - 3 * DAY)),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert "future" not in [e.id for e in projection.entries]
    assert projection.next_refresh_at == NOW + 2 * DAY
    assert (
        project_working([claim("a")], now=NOW, budget_tokens=BUDGET, policy=POLICY).next_refresh_at
        is None
    )


def test_nothing_eligible_gives_no_text() -> None:
    projection = project_working([], now=NOW, budget_tokens=BUDGET, policy=POLICY)
    assert (projection.text, projection.entries, projection.estimated_tokens) == (None, (), 0)


POOL = [
    *ONE_PER_SECTION,
    *(claim(f"x{i}", importance=(i % 3) / 3, access_count=i % 2) for i in range(12)),
    *(
        claim(
            f"ev{i}",
            kind=ClaimKind.EPISODIC,
            meta=temporal(TemporalKind.EVENT, start=NOW - (i % 4) * DAY),
        )
        for i in range(8)
    ),
]


@settings(max_examples=50)
@given(st.permutations(POOL), st.integers(0, 600))
def test_projection_is_independent_of_input_order_and_within_budget(
    shuffled: list[Claim], budget: int
) -> None:
    """R-READ-9: sorted stably — the same claims always project the same way."""
    expected = project_working(POOL, now=NOW, budget_tokens=budget, policy=POLICY)
    actual = project_working(shuffled, now=NOW, budget_tokens=budget, policy=POLICY)
    assert actual == expected
    assert actual.estimated_tokens <= budget


def test_every_line_break_kind_gets_the_continuation_indent() -> None:
    projection = project_working(
        [claim("m", "one\r\ntwo\rthree\u2028four")], now=NOW, budget_tokens=BUDGET, policy=POLICY
    )
    assert "- one\n  two\n  three\n  four" in (projection.text or "")


def _remeasured_selection(claims: list[Claim], budget: int) -> list[str]:
    """The selection as first written: every trial re-renders and re-measures the whole
    text. The projection now adds line weights instead; both must choose the same lines."""
    sections: dict[WorkingSection, list[projections._Placed]] = {s: [] for s in WorkingSection}
    for item in claims:
        assessment = assess(item.temporal, NOW, mode=TemporalMode.CURRENT, policy=POLICY)
        if not assessment.eligible:
            continue
        if item.kind is ClaimKind.REFLECTION:
            section: WorkingSection | None = WorkingSection.REFLECTIONS
        else:
            section = working_section_for(assessment, item.temporal, policy=POLICY)
        if section is not None:
            sections[section].append(projections._place(item, assessment, section))
    ordered = [sorted(members, key=projections._sort_key) for members in sections.values()]
    chosen: list[projections._Placed] = []
    for rank in range(max(len(members) for members in ordered)):
        for members in ordered:
            if rank < len(members):
                trial = [*chosen, members[rank]]
                if estimate_tokens(projections._render(trial)) <= budget:
                    chosen = trial
    return [placed.claim.id for placed in chosen]


_CONTENT = st.text(
    alphabet=st.sampled_from("ab \n猫ねカ한\u3000é😀\u2028"), min_size=1, max_size=40
).filter(str.strip)


@settings(max_examples=80)
@given(st.lists(_CONTENT, min_size=1, max_size=12), st.integers(0, 200))
def test_the_budget_check_by_added_weights_chooses_what_re_measuring_chose(
    contents: list[str], budget: int
) -> None:
    """R-READ-5 / R-READ-9: the incremental budget check is exact, CJK and line breaks too."""
    claims = [
        *(claim(f"c{i}", text, importance=(i % 4) / 4) for i, text in enumerate(contents)),
        *(c for c in ONE_PER_SECTION),
    ]
    projection = project_working(claims, now=NOW, budget_tokens=budget, policy=POLICY)
    chosen = [entry.id for entry in projection.entries]
    expected = _remeasured_selection(claims, budget)
    assert sorted(chosen) == sorted(expected)
    assert projection.estimated_tokens == estimate_tokens(projection.text or "")
    assert projection.estimated_tokens <= budget


def test_an_edited_claim_is_measured_again() -> None:
    """R-READ-5: the per-claim weight cache answers for one revision of one text only."""
    short = claim("same", "tea")
    longer = attrs.evolve(short, content="tea " * 200, revision=2)
    assert project_working([short], now=NOW, budget_tokens=20, policy=POLICY).entries
    assert not project_working([longer], now=NOW, budget_tokens=20, policy=POLICY).entries
