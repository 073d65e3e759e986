"""DeepChat's behaviour-fixture format (version 1), with our additive extensions, and its validator.

The format (reference §10.1): `{version: 1, clock: {now, timeZone}, scenarios: [...]}`; a
scenario has `id`, `axis`, `mode` (`working | recall`), `query`, `rows`, optional
`directives`, `deleteIds`, `replayRows` and `expected`. Times are epoch milliseconds.

Extensions (all optional, so DeepChat's file reads unchanged; documented in
docs/evaluation.md):

- scenario `sessionId` — the session the turn runs in (default `eval-session`);
- row `sessionId` — the row is session-scoped to that session (R-SCOPE-1);
- scenario `budget` — the turn's total token budget (R-READ-5);
- expected `droppedMemoryIds` — `{rowId: reason}` that the manifest must record as dropped;
- expected `refusedDirectiveCount` — directive writes the store must refuse (R-DIR-2);
- expected `directiveCount` — directives in the directive block.

The validator follows DeepChat's (unique ids, known axes and modes, deletes of existing rows,
a preference/directive scenario with directives, all four axes) and adds what catches typos
in expectations: every id an expectation names must be a row of its scenario.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from pathlib import Path

import attrs

from memory_core.domain.claims import ClaimKind
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.manifest import DropReason
from memory_plugins.eval.fixture_io import (
    FixtureError,
    fixture_converter,
    load_json,
    structure_fixture,
)

__all__ = [
    "DEFAULT_SESSION",
    "Axis",
    "BehaviourFixture",
    "DirectiveSpec",
    "Expected",
    "FixtureClock",
    "Mode",
    "Profile",
    "RowSpec",
    "Scenario",
    "TemporalSpec",
    "load_behaviour_fixture",
    "validate_behaviour_fixture",
]

DEFAULT_SESSION = "eval-session"
_STORED_KINDS = frozenset(kind.value for kind in ClaimKind if not kind.is_internal)


class Axis(StrEnum):
    CARRY_FORWARD = "carry_forward"
    PREFERENCE_DIRECTIVE = "preference_directive"
    TEMPORAL = "temporal"
    CORRECTION_FORGETTING = "correction_forgetting"


class Mode(StrEnum):
    WORKING = "working"  # the contribution with no query: working memory and directives
    RECALL = "recall"  # the query-recall lane for `query`


class Profile(StrEnum):
    LEXICAL = "lexical"  # FTS only: embedding provider "none"
    EMBEDDED = "embedded"  # the offline default embedder, vectors warmed before the turn


@attrs.frozen(kw_only=True)
class FixtureClock:
    now: int
    time_zone: str = "UTC"


@attrs.frozen(kw_only=True)
class TemporalSpec:
    temporal_kind: str
    valid_from: int | None = None
    valid_until: int | None = None
    temporal_confidence: float | None = None
    temporal_precision: str | None = None
    temporal_time_zone: str | None = None


@attrs.frozen(kw_only=True)
class RowSpec:
    id: str
    kind: str
    content: str
    importance: float = 0.5
    temporal: TemporalSpec | None = None
    session_id: str | None = None  # extension


@attrs.frozen(kw_only=True)
class DirectiveSpec:
    kind: str
    content: str
    topic: str | None = None
    state: str = "active"


@attrs.frozen(kw_only=True)
class Expected:
    selected_memory_ids: tuple[str, ...] = ()
    excluded_memory_ids: tuple[str, ...] = ()
    section_includes: tuple[str, ...] = ()
    section_excludes: tuple[str, ...] = ()
    directive_includes: tuple[str, ...] = ()
    directive_excludes: tuple[str, ...] = ()
    annotation_includes: dict[str, str] = attrs.field(factory=dict)
    replay_created_count: int | None = None
    dropped_memory_ids: dict[str, str] = attrs.field(factory=dict)  # extension
    refused_directive_count: int | None = None  # extension
    directive_count: int | None = None  # extension


@attrs.frozen(kw_only=True)
class Scenario:
    id: str
    axis: str
    mode: str
    query: str = ""
    rows: tuple[RowSpec, ...] = ()
    directives: tuple[DirectiveSpec, ...] = ()
    delete_ids: tuple[str, ...] = ()
    replay_rows: tuple[RowSpec, ...] = ()
    expected: Expected = attrs.field(factory=Expected)
    session_id: str | None = None  # extension
    budget: int | None = None  # extension

    @property
    def session(self) -> str:
        return self.session_id or DEFAULT_SESSION


@attrs.frozen(kw_only=True)
class BehaviourFixture:
    version: int
    clock: FixtureClock
    scenarios: tuple[Scenario, ...]


_CONVERTER = fixture_converter(forbid_extra_keys=True)


def load_behaviour_fixture(path: Path) -> BehaviourFixture:
    """Read and validate one behaviour fixture; FixtureError names the file and the problem."""
    fixture = structure_fixture(load_json(path), BehaviourFixture, path=path, converter=_CONVERTER)
    problems = validate_behaviour_fixture(fixture)
    if problems:
        shown = "; ".join(problems[:8])
        more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
        raise FixtureError(f"{path}: {shown}{more}")
    return fixture


def _known(value: str, allowed: type[StrEnum] | frozenset[str]) -> bool:
    names = allowed if isinstance(allowed, frozenset) else {m.value for m in allowed}
    return value in names


def _scenario_problems(scenario: Scenario) -> list[str]:
    where = f"scenario {scenario.id}"
    problems: list[str] = []
    if not _known(scenario.axis, Axis):
        problems.append(f"{where}: unknown axis {scenario.axis!r}")
    if not _known(scenario.mode, Mode):
        problems.append(f"{where}: unknown mode {scenario.mode!r}")
    if scenario.budget is not None and scenario.budget < 1:
        problems.append(f"{where}: budget must be positive")
    row_ids = [row.id for row in scenario.rows]
    all_ids = row_ids + [row.id for row in scenario.replay_rows]
    for row_id, count in Counter(all_ids).items():
        if count > 1:
            problems.append(f"{where}: row id {row_id!r} is used {count} times")
    for row in (*scenario.rows, *scenario.replay_rows):
        if not _known(row.kind, _STORED_KINDS):
            problems.append(f"{where}: row {row.id}: kind {row.kind!r} cannot be stored")
    for directive in scenario.directives:
        if not _known(directive.kind, DirectiveKind):
            problems.append(f"{where}: unknown directive kind {directive.kind!r}")
        if directive.state not in ("active", "draft"):
            problems.append(f"{where}: directive state must be active or draft")
    for deleted in scenario.delete_ids:
        if deleted not in row_ids:
            problems.append(f"{where}: deleteIds names {deleted!r}, not a row of the scenario")
    expected = scenario.expected
    named = {
        "selectedMemoryIds": expected.selected_memory_ids,
        "excludedMemoryIds": expected.excluded_memory_ids,
        "annotationIncludes": tuple(expected.annotation_includes),
        "droppedMemoryIds": tuple(expected.dropped_memory_ids),
    }
    for key, ids in named.items():
        for row_id in ids:
            if row_id not in all_ids:
                problems.append(f"{where}: expected.{key} names {row_id!r}, not a row")
    both = set(expected.selected_memory_ids) & set(expected.excluded_memory_ids)
    if both:
        problems.append(f"{where}: ids both selected and excluded: {sorted(both)}")
    for reason in expected.dropped_memory_ids.values():
        if not _known(reason, DropReason):
            problems.append(f"{where}: unknown drop reason {reason!r}")
    return problems


def validate_behaviour_fixture(fixture: BehaviourFixture) -> list[str]:
    """Every problem found, in file order; empty when the fixture is valid."""
    problems: list[str] = []
    if fixture.version != 1:
        problems.append(f"version {fixture.version} is not supported (only 1)")
    if not fixture.scenarios:
        problems.append("no scenarios")
    for scenario_id, count in Counter(s.id for s in fixture.scenarios).items():
        if count > 1:
            problems.append(f"scenario id {scenario_id!r} is used {count} times")
    for scenario in fixture.scenarios:
        problems.extend(_scenario_problems(scenario))
    axes = {scenario.axis for scenario in fixture.scenarios}
    missing = [axis.value for axis in Axis if axis.value not in axes]
    if missing:
        problems.append(f"axes without a scenario: {', '.join(missing)}")
    if not any(
        scenario.axis == Axis.PREFERENCE_DIRECTIVE and scenario.directives
        for scenario in fixture.scenarios
    ):
        problems.append("no preference_directive scenario has directives")
    return problems
