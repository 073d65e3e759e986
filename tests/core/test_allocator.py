"""The contribution-budget allocator: worked examples and invariants (R-READ-5)."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.allocator import (
    POLICY_VERSION,
    Allocation,
    AllocationPolicy,
    AllocationRequest,
    Lane,
    LaneTokens,
    allocate,
)
from memory_core.domain.errors import ValidationError
from memory_core.settings import MemorySettings

LANES = (Lane.PERSONA, Lane.WORKING, Lane.RECALL)


def lanes(persona: int = 0, working: int = 0, recall: int = 0) -> LaneTokens:
    return LaneTokens(persona=persona, working=working, recall=recall)


def request(
    total: int,
    *,
    directive: int = 0,
    overhead: int = 0,
    demand: LaneTokens | None = None,
    minimum: LaneTokens | None = None,
) -> AllocationRequest:
    return AllocationRequest(
        total=total,
        directive_demand=directive,
        overhead=overhead,
        demand=demand or lanes(),
        minimum=minimum or lanes(),
    )


# --- an independent, token-by-token transcription of reference §4.8 (the oracle) ---------


def oracle(req: AllocationRequest, policy: AllocationPolicy) -> dict[str, object]:
    floors = {
        Lane.PERSONA: policy.persona_floor,
        Lane.WORKING: policy.working_floor,
        Lane.RECALL: policy.recall_reservation,
    }
    caps = {
        Lane.PERSONA: policy.persona_ceiling,
        Lane.WORKING: policy.working_ceiling,
        Lane.RECALL: 10**18,
    }
    demand = {lane: req.demand[lane] for lane in LANES}
    minimum = {lane: min(demand[lane], req.minimum[lane]) for lane in LANES}
    allocated = dict.fromkeys(LANES, 0)
    directive = min(req.directive_demand, policy.directive_ceiling, req.total)
    left = req.total - directive
    has_demand = any(demand[lane] > 0 for lane in LANES)
    can_reserve = has_demand and (req.overhead == 0 or left > req.overhead)
    overhead = req.overhead if can_reserve else 0
    left -= overhead
    active = [lane for lane in LANES if demand[lane] > 0] if can_reserve else []
    if sum(minimum[lane] for lane in active) <= left:
        order = active
    else:
        order = [Lane.RECALL, Lane.PERSONA, Lane.WORKING]
    admitted = []
    for lane in order:
        if demand[lane] <= 0 or left < minimum[lane]:
            continue
        allocated[lane] = minimum[lane]
        left -= minimum[lane]
        admitted.append(lane)
    if not admitted:
        left += overhead
        overhead = 0
    target = {lane: min(demand[lane], floors[lane]) if lane in admitted else 0 for lane in LANES}
    while left > 0:
        progressed = False
        for lane in LANES:
            if left == 0:
                break
            if lane in admitted and allocated[lane] < target[lane]:
                allocated[lane] += 1
                left -= 1
                progressed = True
        if not progressed:
            break
    for lane in LANES:
        if lane in admitted:
            grow = min(left, max(0, min(demand[lane], caps[lane]) - allocated[lane]))
            allocated[lane] += grow
            left -= grow
    return {
        "directive": directive,
        "overhead": overhead,
        "allocated": allocated,
        "borrowed": {lane: max(0, allocated[lane] - target[lane]) for lane in LANES},
        "unallocated": left,
        "constrained": overhead != req.overhead
        or directive < req.directive_demand
        or any(allocated[lane] < demand[lane] for lane in LANES),
    }


# --- worked examples, computed by hand from the algorithm ---------------------------------


def test_default_budget_fills_floors_then_lends_persona_working_then_recall() -> None:
    """R-READ-5: at 1,200 tokens floors are met, then persona and working grow to their
    ceilings and recall takes the rest.

    1200 − overhead 40 = 1160; minimums 10+12+15 → 1123 left; floors 128/192/256 need
    118+180+241 = 539 → 584 left; persona +192 to 320 → 392; working +288 to 480 → 104;
    recall +104 → 360.
    """
    result = allocate(
        request(
            1_200,
            overhead=40,
            demand=lanes(500, 600, 1_000),
            minimum=lanes(10, 12, 15),
        )
    )
    assert result.directive == 0
    assert result.overhead == 40
    assert result.allocated == lanes(320, 480, 360)
    assert result.guaranteed == lanes(128, 192, 256)
    assert result.borrowed == lanes(192, 288, 104)
    assert result.unallocated == 0
    assert result.admitted == (Lane.PERSONA, Lane.WORKING, Lane.RECALL)
    assert result.constrained is True  # recall got 360 of 1000


def test_directive_lane_is_capped_at_its_ceiling_and_small_demands_are_met_in_full() -> None:
    """R-READ-5: directives 600 → 512; the lanes' demands (below their floors) are all met
    and 198 tokens stay unallocated; still constrained because directives were cut.

    1200 − 512 = 688; − 40 = 648; minimums 30+30+20 → 568; floors = demands 100/150/200 need
    70+120+180 = 370 → 198 left; nothing to borrow.
    """
    result = allocate(
        request(
            1_200,
            directive=600,
            overhead=40,
            demand=lanes(100, 150, 200),
            minimum=lanes(30, 30, 20),
        )
    )
    assert result.directive == 512
    assert result.allocated == lanes(100, 150, 200)
    assert result.borrowed == lanes(0, 0, 0)
    assert result.unallocated == 198
    assert result.constrained is True


def test_everything_fits_so_nothing_is_constrained() -> None:
    """R-READ-5: with room for every demand the allocation is exact and unconstrained."""
    result = allocate(
        request(
            1_200,
            directive=100,
            overhead=30,
            demand=lanes(50, 60, 70),
            minimum=lanes(20, 20, 20),
        )
    )
    assert result.directive == 100
    assert result.allocated == lanes(50, 60, 70)
    assert result.unallocated == 1_200 - 100 - 30 - 180
    assert result.constrained is False


def test_guarantees_are_shared_round_robin_one_token_at_a_time() -> None:
    """R-READ-5: 280 tokens for floors 128/192/256 → 93 full rounds (279), the 280th token
    goes to persona, first in round-robin order."""
    result = allocate(request(300, overhead=20, demand=lanes(400, 400, 400)))
    assert result.allocated == lanes(94, 93, 93)
    assert result.unallocated == 0
    assert result.borrowed == lanes(0, 0, 0)


def test_round_robin_continues_among_lanes_that_still_need_tokens() -> None:
    """R-READ-5: persona is satisfied at 50 after 150 tokens; the other 250 alternate
    between working and recall (125 each); an extra token goes to working first."""
    even = allocate(request(400, demand=lanes(50, 400, 400)))
    assert even.allocated == lanes(50, 175, 175)
    odd = allocate(request(401, demand=lanes(50, 400, 400)))
    assert odd.allocated == lanes(50, 176, 175)


def test_constrained_admission_prefers_recall_then_persona_then_working() -> None:
    """R-READ-5: 90 tokens cannot hold minimums 40+40+50 → recall (50) then persona (40) are
    admitted; working's minimum no longer fits and it gets nothing."""
    result = allocate(
        request(
            100,
            overhead=10,
            demand=lanes(300, 300, 300),
            minimum=lanes(40, 40, 50),
        )
    )
    assert result.admitted == (Lane.RECALL, Lane.PERSONA)
    assert result.allocated == lanes(40, 0, 50)
    assert result.overhead == 10
    assert result.unallocated == 0
    assert result.constrained is True


def test_constrained_admission_skips_a_lane_whose_minimum_does_not_fit() -> None:
    """R-READ-5: recall's minimum 80 does not fit in 70, so persona (30) and then working (30)
    are admitted and share the 10 left round-robin."""
    result = allocate(
        request(
            80,
            overhead=10,
            demand=lanes(300, 300, 300),
            minimum=lanes(30, 30, 80),
        )
    )
    assert result.admitted == (Lane.PERSONA, Lane.WORKING)
    assert result.allocated == lanes(35, 35, 0)


def test_overhead_is_not_reserved_when_it_does_not_strictly_fit() -> None:
    """R-READ-5: after 512 directive tokens 30 remain; an overhead of 30 needs strictly more,
    so no memory lane is admitted and the 30 stay unallocated."""
    result = allocate(
        request(542, directive=600, overhead=30, demand=lanes(10, 10, 10), minimum=lanes(1, 1, 1))
    )
    assert result.directive == 512
    assert result.overhead == 0
    assert result.allocated == lanes(0, 0, 0)
    assert result.admitted == ()
    assert result.unallocated == 30
    assert result.constrained is True


def test_overhead_is_released_when_no_lane_can_be_admitted() -> None:
    """R-READ-5: no minimum fits in 90 tokens, so the reserved overhead is handed back."""
    result = allocate(
        request(100, overhead=10, demand=lanes(300, 300, 300), minimum=lanes(200, 200, 200))
    )
    assert result.overhead == 0
    assert result.admitted == ()
    assert result.unallocated == 100
    assert result.constrained is True


def test_overhead_without_memory_demand_is_dropped_and_marks_the_allocation_constrained() -> None:
    """R-READ-5: as in the reference, an overhead asked for with no memory demand is not
    reserved, and a dropped overhead counts as constrained."""
    result = allocate(request(1_200, directive=100, overhead=40))
    assert result.directive == 100
    assert result.overhead == 0
    assert result.unallocated == 1_100
    assert result.constrained is True
    assert allocate(request(1_200, directive=100)).constrained is False


def test_zero_overhead_is_always_reservable() -> None:
    """R-READ-5: an overhead of 0 is reserved even when nothing remains after directives."""
    result = allocate(request(100, directive=300, demand=lanes(0, 0, 5)))
    assert result.directive == 100
    assert result.admitted == (Lane.RECALL,)
    assert result.allocated == lanes(0, 0, 0)
    assert result.constrained is True


def test_minimum_above_the_floor_counts_as_borrowed_beyond_the_guarantee() -> None:
    """R-READ-5: persona admitted at its 200-token minimum is past its 128 floor; it then
    grows to min(demand 300, ceiling 320) and 172 tokens are recorded as borrowed."""
    result = allocate(request(1_000, demand=lanes(300, 0, 0), minimum=lanes(200, 0, 0)))
    assert result.allocated == lanes(300, 0, 0)
    assert result.guaranteed == lanes(128, 0, 0)
    assert result.borrowed == lanes(172, 0, 0)


def test_minimum_larger_than_demand_counts_as_the_demand() -> None:
    """R-READ-5: a 90-token minimum on a 40-token demand admits the lane at 40."""
    result = allocate(request(60, demand=lanes(0, 0, 40), minimum=lanes(0, 0, 90)))
    assert result.allocated == lanes(0, 0, 40)
    assert result.constrained is False


def test_custom_policy_changes_floors_and_ceilings() -> None:
    """R-READ-5: a tuned policy is honoured (persona ceiling 200, recall reservation 100)."""
    policy = AllocationPolicy(persona_ceiling=200, recall_reservation=100)
    result = allocate(request(1_000, demand=lanes(900, 0, 900)), policy)
    # floors 128 + 100; persona grows to 200; recall takes the remaining 800.
    assert result.allocated == lanes(200, 0, 800)
    assert result.borrowed == lanes(72, 0, 700)


def test_manifest_holds_plain_json_types_with_directive_in_every_map() -> None:
    """R-READ-5: the allocation is recorded in the manifest as plain JSON."""
    result = allocate(request(1_200, directive=600, overhead=40, demand=lanes(100, 150, 200)))
    manifest = result.to_manifest()
    assert json.loads(json.dumps(manifest)) == manifest
    assert manifest == {
        "policy_version": POLICY_VERSION,
        "total_tokens": 1_200,
        "overhead_tokens": 40,
        "demand": {"directive": 600, "persona": 100, "working": 150, "recall": 200},
        "allocated": {"directive": 512, "persona": 100, "working": 150, "recall": 200},
        "borrowed": {"directive": 0, "persona": 0, "working": 0, "recall": 0},
        "unallocated_tokens": 198,
        "constrained": True,
    }
    assert all(type(key) is str for key in manifest["allocated"])


def test_policy_from_settings_takes_every_budget_number() -> None:
    """R-READ-5: the policy is built from the one settings object."""
    policy = AllocationPolicy.from_settings(
        MemorySettings(
            directive_ceiling_tokens=400,
            persona_floor_tokens=100,
            persona_ceiling_tokens=300,
            working_floor_tokens=150,
            working_ceiling_tokens=450,
            recall_reservation_tokens=200,
        )
    )
    assert policy == AllocationPolicy(
        directive_ceiling=400,
        persona_floor=100,
        persona_ceiling=300,
        working_floor=150,
        working_ceiling=450,
        recall_reservation=200,
    )
    assert AllocationPolicy.from_settings(MemorySettings()) == AllocationPolicy()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"total": -1}, "total"),
        ({"total": 10, "directive_demand": -1}, "directive_demand"),
        ({"total": 10, "overhead": -5}, "overhead"),
        ({"total": 10, "demand": LaneTokens(working=-1)}, "demand.working"),
        ({"total": 10, "minimum": LaneTokens(recall=-1)}, "minimum.recall"),
        ({"total": 1.5}, "total"),
        ({"total": True}, "total"),
        ({"total": 10, "demand": LaneTokens(persona="3")}, "demand.persona"),  # type: ignore[arg-type]
    ],
)
def test_invalid_request_numbers_are_rejected_naming_the_field(
    kwargs: dict[str, object], field: str
) -> None:
    """R-READ-5: negative or non-integer inputs raise ValidationError naming the field."""
    with pytest.raises(ValidationError) as caught:
        AllocationRequest(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"directive_ceiling": -1}, "directive_ceiling"),
        ({"persona_floor": 400}, "persona_floor"),
        ({"working_floor": 500}, "working_floor"),
        ({"recall_reservation": 2.0}, "recall_reservation"),
    ],
)
def test_invalid_policy_is_rejected_naming_the_field(kwargs: dict[str, object], field: str) -> None:
    """R-READ-5: a policy with negative numbers or a floor above its ceiling is refused."""
    with pytest.raises(ValidationError) as caught:
        AllocationPolicy(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


# --- properties ------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=2_000)
small = st.integers(min_value=0, max_value=120)
lane_tokens = st.builds(LaneTokens, persona=counts, working=counts, recall=counts)
minimums = st.builds(LaneTokens, persona=small, working=small, recall=small)
requests = st.builds(
    AllocationRequest,
    total=st.integers(min_value=0, max_value=8_000),
    directive_demand=st.integers(min_value=0, max_value=1_000),
    overhead=st.integers(min_value=0, max_value=200),
    demand=lane_tokens,
    minimum=minimums,
)


@st.composite
def policies(draw: st.DrawFn) -> AllocationPolicy:
    persona_floor = draw(st.integers(0, 400))
    working_floor = draw(st.integers(0, 400))
    return AllocationPolicy(
        directive_ceiling=draw(st.integers(0, 1_000)),
        persona_floor=persona_floor,
        persona_ceiling=persona_floor + draw(st.integers(0, 400)),
        working_floor=working_floor,
        working_ceiling=working_floor + draw(st.integers(0, 400)),
        recall_reservation=draw(st.integers(0, 600)),
    )


any_policy = st.one_of(st.just(AllocationPolicy()), policies())


@settings(max_examples=300)
@given(requests, any_policy)
def test_allocation_matches_the_token_by_token_reference_algorithm(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: the arithmetic round-robin gives exactly the per-token reference result."""
    result = allocate(req, policy)
    expected = oracle(req, policy)
    assert result.directive == expected["directive"]
    assert result.overhead == expected["overhead"]
    assert result.allocated.to_dict() == {
        lane.value: count
        for lane, count in expected["allocated"].items()  # type: ignore[attr-defined]
    }
    assert result.borrowed.to_dict() == {
        lane.value: count
        for lane, count in expected["borrowed"].items()  # type: ignore[attr-defined]
    }
    assert result.unallocated == expected["unallocated"]
    assert result.constrained == expected["constrained"]


@given(requests, any_policy)
def test_allocation_never_exceeds_the_total(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: directive + overhead + lanes ≤ total, and the rest is reported unallocated."""
    result = allocate(req, policy)
    assigned = result.directive + result.overhead + result.allocated.total
    assert assigned <= req.total
    assert assigned + result.unallocated == req.total
    assert result.unallocated >= 0


@given(requests, any_policy)
def test_directive_stays_within_ceiling_demand_and_total(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: the directive lane never exceeds its ceiling, its demand or the total."""
    result = allocate(req, policy)
    assert result.directive <= policy.directive_ceiling
    assert result.directive <= req.directive_demand
    assert result.directive <= req.total
    assert result.directive == min(req.directive_demand, policy.directive_ceiling, req.total)


@given(requests, any_policy)
def test_no_lane_exceeds_its_demand_and_projections_respect_their_ceilings(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: no lane above its demand; persona/working never borrow past their ceilings
    (only a minimum viable size larger than the ceiling can sit above it)."""
    result = allocate(req, policy)
    for lane in LANES:
        assert result.allocated[lane] <= req.demand[lane]
    for lane, ceiling in (
        (Lane.PERSONA, policy.persona_ceiling),
        (Lane.WORKING, policy.working_ceiling),
    ):
        entry = min(req.minimum[lane], req.demand[lane])
        assert result.allocated[lane] <= max(ceiling, entry)


@given(requests, any_policy)
def test_floors_are_honoured_whenever_they_fit(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: if the overhead and every lane's larger of (minimum, guaranteed floor) fit
    after directives, every lane gets at least min(demand, floor)."""
    directive = min(req.directive_demand, policy.directive_ceiling, req.total)
    left = req.total - directive
    wanted = [lane for lane in LANES if req.demand[lane] > 0]
    needed = sum(
        max(min(req.minimum[lane], req.demand[lane]), min(req.demand[lane], policy.floor(lane)))
        for lane in wanted
    )
    overhead_fits = req.overhead == 0 or left > req.overhead
    if not wanted or not overhead_fits or needed > left - req.overhead:
        return
    result = allocate(req, policy)
    for lane in LANES:
        assert result.allocated[lane] >= min(req.demand[lane], policy.floor(lane))


@given(requests, any_policy)
def test_constrained_flag_reports_any_shortfall(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: constrained ⇔ directives or a lane below demand, or the overhead dropped."""
    result = allocate(req, policy)
    shortfall = (
        result.directive < req.directive_demand
        or result.overhead != req.overhead
        or any(result.allocated[lane] < req.demand[lane] for lane in LANES)
    )
    assert result.constrained is shortfall


@given(requests, any_policy)
def test_leftover_tokens_mean_every_admitted_lane_reached_its_cap(
    req: AllocationRequest, policy: AllocationPolicy
) -> None:
    """R-READ-5: borrowing is bounded but not wasteful — tokens are left over only when each
    admitted lane is at min(demand, ceiling) (recall: its full demand)."""
    result = allocate(req, policy)
    if result.unallocated == 0:
        return
    for lane in result.admitted:
        ceiling = policy.ceiling(lane)
        cap = req.demand[lane] if ceiling is None else min(req.demand[lane], ceiling)
        assert result.allocated[lane] >= cap


@given(requests, any_policy)
def test_allocation_is_deterministic(req: AllocationRequest, policy: AllocationPolicy) -> None:
    """R-READ-5: the same request and policy always give the same allocation."""
    first = allocate(req, policy)
    second = allocate(
        AllocationRequest(
            total=req.total,
            directive_demand=req.directive_demand,
            overhead=req.overhead,
            demand=LaneTokens(**req.demand.to_dict()),
            minimum=LaneTokens(**req.minimum.to_dict()),
        ),
        AllocationPolicy(**attrs.asdict(policy)),
    )
    assert first == second
    assert first.to_manifest() == second.to_manifest()
    assert isinstance(first, Allocation)
