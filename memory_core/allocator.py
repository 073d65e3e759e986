"""The one pure contribution-budget allocator: who gets how many tokens of a turn (R-READ-5).

Policy version 1 reproduces DeepChat's `allocateMemoryContributionBudget` (reference §4.8):

1. directives take `min(demand, ceiling, total)` first;
2. the memory container's overhead (read-only notice, separators) is reserved only when some
   memory lane has demand and either the overhead is zero or strictly less than what is left;
3. lanes with demand are admitted at their minimum viable size — all of them, in the order
   persona, working, recall, when the minimums fit together; otherwise one by one in the
   constrained priority recall → persona → working, each only if its minimum still fits. With
   no lane admitted the overhead is handed back;
4. admitted lanes are filled towards their guaranteed target `min(demand, floor)` round-robin,
   one token per lane per round (computed arithmetically, same result);
5. what is left is lent out: persona up to `min(demand, ceiling)`, then working likewise, then
   recall up to its full demand.

The assembler enforces the hard ceiling on rendered text; this module only decides shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import attrs

from memory_core.domain.errors import ValidationError
from memory_core.settings import MemorySettings

__all__ = [
    "POLICY_VERSION",
    "Allocation",
    "AllocationPolicy",
    "AllocationRequest",
    "Lane",
    "LaneTokens",
    "allocate",
]

POLICY_VERSION = 1


class Lane(StrEnum):
    """The memory lanes of the `<context-data>` container, in round-robin order."""

    PERSONA = "persona"
    WORKING = "working"
    RECALL = "recall"


# Order of round-robin filling, borrowing and unconstrained admission.
_LANES: tuple[Lane, ...] = (Lane.PERSONA, Lane.WORKING, Lane.RECALL)
# Under pressure the turn-specific recall wins over the slowly changing projections.
_CONSTRAINED_PRIORITY: tuple[Lane, ...] = (Lane.RECALL, Lane.PERSONA, Lane.WORKING)


def _require_count(value: object, field: str) -> int:
    # bool is an int subclass; a flag passed as a count is a caller bug, not 0/1 tokens.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, "must be an integer")
    if value < 0:
        raise ValidationError(field, "must not be negative")
    return value


@attrs.frozen(kw_only=True)
class LaneTokens:
    """A token count per memory lane. Validated where it enters the allocator."""

    persona: int = 0
    working: int = 0
    recall: int = 0

    @classmethod
    def of(cls, counts: Mapping[Lane, int]) -> LaneTokens:
        return cls(**{lane.value: counts.get(lane, 0) for lane in _LANES})

    def __getitem__(self, lane: Lane) -> int:
        # A member is answered by its value directly: an assembly reads lanes ~35 times, and
        # the enum call was most of it. Anything else goes through `Lane(lane)` as before.
        field = lane._value_ if lane.__class__ is Lane else Lane(lane).value
        return int(getattr(self, field))

    @property
    def total(self) -> int:
        return self.persona + self.working + self.recall

    def to_dict(self) -> dict[str, int]:
        return {lane.value: self[lane] for lane in _LANES}

    def check(self, field: str) -> None:
        """Raise ValidationError naming `field.<lane>` unless every count is a non-negative int."""
        for lane in _LANES:
            _require_count(getattr(self, lane.value), f"{field}.{lane.value}")


@attrs.frozen(kw_only=True)
class AllocationPolicy:
    """Floors, ceilings and reservations of policy version 1 (defaults: SPEC §11)."""

    directive_ceiling: int = 512
    persona_floor: int = 128
    persona_ceiling: int = 320
    working_floor: int = 192
    working_ceiling: int = 480
    recall_reservation: int = 256

    def __attrs_post_init__(self) -> None:
        for field in attrs.fields(AllocationPolicy):
            _require_count(getattr(self, field.name), field.name)
        if self.persona_floor > self.persona_ceiling:
            raise ValidationError("persona_floor", "must not exceed persona_ceiling")
        if self.working_floor > self.working_ceiling:
            raise ValidationError("working_floor", "must not exceed working_ceiling")

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> AllocationPolicy:
        return cls(
            directive_ceiling=settings.directive_ceiling_tokens,
            persona_floor=settings.persona_floor_tokens,
            persona_ceiling=settings.persona_ceiling_tokens,
            working_floor=settings.working_floor_tokens,
            working_ceiling=settings.working_ceiling_tokens,
            recall_reservation=settings.recall_reservation_tokens,
        )

    def floor(self, lane: Lane) -> int:
        """Tokens a lane is guaranteed (up to its demand) once admitted."""
        return {
            Lane.PERSONA: self.persona_floor,
            Lane.WORKING: self.working_floor,
            Lane.RECALL: self.recall_reservation,
        }[lane]

    def ceiling(self, lane: Lane) -> int | None:
        """Most a lane may grow to by borrowing; recall has no ceiling (None)."""
        return {
            Lane.PERSONA: self.persona_ceiling,
            Lane.WORKING: self.working_ceiling,
            Lane.RECALL: None,
        }[lane]


@attrs.frozen(kw_only=True)
class AllocationRequest:
    """What one turn asks for, in estimated tokens.

    `minimum` is each lane's minimum viable size (the assembler measures it: a section with
    the first 24 code points of a persona/working body, the smallest single recall line); a
    lane that cannot get it is left out rather than rendered as an empty shell. A minimum
    above the lane's demand counts as the demand.
    """

    total: int
    directive_demand: int = 0
    overhead: int = 0
    demand: LaneTokens = attrs.field(factory=LaneTokens)
    minimum: LaneTokens = attrs.field(factory=LaneTokens)

    def __attrs_post_init__(self) -> None:
        _require_count(self.total, "total")
        _require_count(self.directive_demand, "directive_demand")
        _require_count(self.overhead, "overhead")
        for name in ("demand", "minimum"):
            value = getattr(self, name)
            if not isinstance(value, LaneTokens):
                raise ValidationError(name, "must be LaneTokens")
            value.check(name)


@attrs.frozen(kw_only=True)
class Allocation:
    """The allocator's decision, recorded in the selection manifest.

    Invariant: `directive + overhead + allocated.total + unallocated == total`.
    """

    policy_version: int = POLICY_VERSION
    total: int
    overhead: int  # reserved container overhead (0 when not reserved)
    requested_overhead: int
    directive_demand: int
    directive: int
    demand: LaneTokens
    allocated: LaneTokens
    guaranteed: LaneTokens  # min(demand, floor) per admitted lane
    borrowed: LaneTokens  # allocated − guaranteed, never negative
    admitted: tuple[Lane, ...]  # in admission order
    unallocated: int
    constrained: bool  # a lane or the directives below demand, or the overhead dropped

    def to_manifest(self) -> dict[str, Any]:
        """Plain JSON types, keyed like the rest of our manifests (snake_case)."""
        return {
            "policy_version": self.policy_version,
            "total_tokens": self.total,
            "overhead_tokens": self.overhead,
            "demand": {"directive": self.directive_demand, **self.demand.to_dict()},
            "allocated": {"directive": self.directive, **self.allocated.to_dict()},
            "borrowed": {"directive": 0, **self.borrowed.to_dict()},
            "unallocated_tokens": self.unallocated,
            "constrained": self.constrained,
        }


def _fill_round_robin(needs: dict[Lane, int], available: int) -> tuple[dict[Lane, int], int]:
    """Grant `needs` one token per lane per round in `_LANES` order until `available` runs out.

    Same result as the token-by-token loop: find the number of complete rounds `k` (every
    lane gets `min(need, k)`), then the leftover goes one each to the first lanes, in order,
    that still needed more than `k`. Returns (grants, tokens left).
    """
    total_need = sum(needs.values())
    if total_need <= available:
        return dict(needs), available - total_need
    # Raise the water level need by need; `lanes_left` lanes are still below it.
    spent = 0
    level = 0
    lanes_left = sum(1 for need in needs.values() if need > 0)
    rounds = 0
    for need in sorted(need for need in needs.values() if need > 0):
        step = (need - level) * lanes_left
        if spent + step > available:
            rounds = level + (available - spent) // lanes_left
            break
        spent += step
        level = need
        lanes_left -= 1
    grants = {lane: min(need, rounds) for lane, need in needs.items()}
    leftover = available - sum(grants.values())
    for lane in _LANES:
        if leftover == 0:
            break
        if lane in needs and needs[lane] > rounds:
            grants[lane] += 1
            leftover -= 1
    return grants, leftover


def allocate(request: AllocationRequest, policy: AllocationPolicy | None = None) -> Allocation:
    """Split `request.total` between directives, container overhead and the memory lanes."""
    policy = policy or AllocationPolicy()
    demand = request.demand
    minimum = {lane: min(demand[lane], request.minimum[lane]) for lane in _LANES}

    directive = min(request.directive_demand, policy.directive_ceiling, request.total)
    remaining = request.total - directive

    # The container is useless without its notice, so no notice room means no memory lanes.
    wanted = [lane for lane in _LANES if demand[lane] > 0]
    reserve = bool(wanted) and (request.overhead == 0 or remaining > request.overhead)
    overhead = request.overhead if reserve else 0
    remaining -= overhead

    allocated = dict.fromkeys(_LANES, 0)
    admitted: list[Lane] = []
    if reserve:
        fits_together = sum(minimum[lane] for lane in wanted) <= remaining
        for lane in wanted if fits_together else _CONSTRAINED_PRIORITY:
            if demand[lane] > 0 and minimum[lane] <= remaining:
                allocated[lane] = minimum[lane]
                remaining -= minimum[lane]
                admitted.append(lane)
    if not admitted:
        remaining += overhead
        overhead = 0

    guaranteed = {
        lane: min(demand[lane], policy.floor(lane)) if lane in admitted else 0 for lane in _LANES
    }
    needs = {lane: max(0, guaranteed[lane] - allocated[lane]) for lane in admitted}
    grants, remaining = _fill_round_robin(needs, remaining)
    for lane, grant in grants.items():
        allocated[lane] += grant

    for lane in _LANES:
        if lane not in admitted:
            continue
        ceiling = policy.ceiling(lane)
        cap = demand[lane] if ceiling is None else min(demand[lane], ceiling)
        growth = min(remaining, max(0, cap - allocated[lane]))
        allocated[lane] += growth
        remaining -= growth

    constrained = (
        overhead != request.overhead
        or directive < request.directive_demand
        or any(allocated[lane] < demand[lane] for lane in _LANES)
    )
    return Allocation(
        total=request.total,
        overhead=overhead,
        requested_overhead=request.overhead,
        directive_demand=request.directive_demand,
        directive=directive,
        demand=demand,
        allocated=LaneTokens.of(allocated),
        guaranteed=LaneTokens.of(guaranteed),
        borrowed=LaneTokens.of(
            {lane: max(0, allocated[lane] - guaranteed[lane]) for lane in _LANES}
        ),
        admitted=tuple(admitted),
        unallocated=remaining,
        constrained=constrained,
    )
