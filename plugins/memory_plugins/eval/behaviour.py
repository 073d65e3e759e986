"""Run behaviour fixtures through the real stores and report pass/fail per scenario and axis.

One fresh memory per fixture and profile (a temporary directory, business time at the
fixture's `clock.now`); each scenario is its own agent in it, so scenarios cannot see each
other — which the run also exercises (R-PRIV-2). Per scenario, in this order:

1. rows are stored as of `now − 1000 ms` (an import, the way DeepChat's harness seeds them);
   session rows are session-scoped; the fixture→claim id map is kept for the checks;
2. `deleteIds` go through `MemoryService.delete` (exact forgetting, R-FORGET-1);
3. `replayRows` are offered through the model's path, `remember` (never a user add), and
   the rows actually created are counted (R-WRITE-5);
4. directives: `active` ones are explicit user creates, `draft` ones model suggestions
   (R-DIR-1); a write the store refuses (an over-broad topic, R-DIR-2) is counted;
5. the embedded profile embeds and warms the agent's vectors;
6. one turn through `MemoryRuntime.prepare_turn`: `recall` mode asks `query`, `working`
   mode asks nothing. Recall mode runs the runtime with the working lane switched off
   (working floor and ceiling 0): otherwise every row of a small agent shows up in working
   memory and the recall lane, which skips what working memory already shows, selects
   nothing — DeepChat's harness likewise builds no working projection in recall mode.

Then every expectation is checked and each failure is named (`selectedMemoryIds: …`). Two
invariants hold for every scenario: the turn did not fail open, and the contribution fits
its token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from memory_core.domain.claims import ClaimDraft, ClaimKind, ClaimSource, WriteOrigin
from memory_core.domain.directives import DirectiveKind
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import Scope
from memory_core.domain.temporal import ATEMPORAL, Interval, TemporalMetadata
from memory_core.domain.tokens import estimate_tokens
from memory_core.ports.claims import InsertStatus
from memory_core.services.read.runtime import ContributionOutcome, MemoryRuntime, TurnContribution
from memory_core.services.read.sanitizer import sanitize
from memory_core.services.service import RememberStatus
from memory_core.services.write.ingestion.types import SessionKind
from memory_core.settings import MemorySettings
from memory_plugins.config import MemoryConfig
from memory_plugins.eval.behaviour_format import (
    BehaviourFixture,
    Mode,
    Profile,
    RowSpec,
    Scenario,
    TemporalSpec,
)
from memory_plugins.eval.fixture_io import FixtureError
from memory_plugins.eval.harness import (
    DEFAULT_EMBEDDER,
    LEXICAL,
    SEED_AGE,
    EvalMemory,
    FixedClock,
    epoch_ms,
    eval_memory,
)

__all__ = ["AxisSummary", "BehaviourReport", "ScenarioResult", "embedder_for", "run_behaviour"]


@attrs.frozen(kw_only=True)
class ScenarioResult:
    id: str
    axis: str
    mode: str
    profile: str
    failures: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()  # fixture row ids the recall lane selected
    dropped: dict[str, str] = attrs.field(factory=dict)  # fixture row id -> reason
    estimated_tokens: int = 0
    budget: int = 0
    degradations: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failures


@attrs.frozen(kw_only=True)
class AxisSummary:
    axis: str
    passed: int
    total: int


@attrs.frozen(kw_only=True)
class BehaviourReport:
    fixture: str
    profile: str
    embedder: str
    scenarios: tuple[ScenarioResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.scenarios) and all(result.passed for result in self.scenarios)

    @property
    def axes(self) -> tuple[AxisSummary, ...]:
        order: dict[str, list[ScenarioResult]] = {}
        for result in self.scenarios:
            order.setdefault(result.axis, []).append(result)
        return tuple(
            AxisSummary(axis=axis, passed=sum(r.passed for r in results), total=len(results))
            for axis, results in order.items()
        )


def embedder_for(profile: Profile, base: MemoryConfig | None) -> str:
    """The lexical profile has no embedder; the embedded one uses the configured embedder,
    or the offline default when the configuration switches embedding off."""
    if profile is Profile.LEXICAL:
        return LEXICAL
    choice = base.choice("embedding_provider") if base is not None else None
    return choice.name if choice is not None and choice.name != LEXICAL else DEFAULT_EMBEDDER


async def run_behaviour(
    fixture: BehaviourFixture,
    *,
    path: Path,
    profile: Profile,
    base: MemoryConfig | None = None,
) -> BehaviourReport:
    """Run every scenario of `fixture` in `profile`."""
    clock = FixedClock(epoch_ms(fixture.clock.now), fixture.clock.time_zone)
    embedder = embedder_for(profile, base)
    results: list[ScenarioResult] = []
    async with eval_memory(embedder, clock=clock, base=base) as memory:
        for index, scenario in enumerate(fixture.scenarios):
            runner = _ScenarioRun(memory, scenario, agent_id=f"scenario-{index:03d}", path=path)
            results.append(await runner.run(profile))
    return BehaviourReport(
        fixture=str(path), profile=profile.value, embedder=embedder, scenarios=tuple(results)
    )


def _temporal(spec: TemporalSpec | None, where: str) -> TemporalMetadata:
    if spec is None:
        return ATEMPORAL
    try:
        return TemporalMetadata(
            kind=spec.temporal_kind,
            interval=Interval(
                valid_from=epoch_ms(spec.valid_from) if spec.valid_from is not None else None,
                valid_until=epoch_ms(spec.valid_until) if spec.valid_until is not None else None,
            ),
            precision=spec.temporal_precision,
            timezone=spec.temporal_time_zone,
            confidence=spec.temporal_confidence,
        )
    except ValidationError as exc:
        raise FixtureError(f"{where}.temporal: {exc}") from exc


class _ScenarioRun:
    """One scenario against one agent of the evaluation memory."""

    def __init__(self, memory: EvalMemory, scenario: Scenario, *, agent_id: str, path: Path):
        self.memory = memory
        self.scenario = scenario
        self.agent_id = agent_id
        self.where = f"{path}: scenario {scenario.id}"
        self.ids: dict[str, str] = {}  # fixture row id -> claim id
        self.failures: list[str] = []

    def _draft(self, row: RowSpec) -> ClaimDraft:
        scope = Scope.session(row.session_id) if row.session_id else Scope.agent()
        try:
            return ClaimDraft(
                agent_id=self.agent_id,
                kind=row.kind,
                content=row.content,
                importance=row.importance,
                temporal=_temporal(row.temporal, f"{self.where}: row {row.id}"),
                scope=scope,
                source=ClaimSource(session_id=row.session_id, extractor="eval-fixture"),
            )
        except ValidationError as exc:
            raise FixtureError(f"{self.where}: row {row.id}: {exc}") from exc

    async def run(self, profile: Profile) -> ScenarioResult:
        service = self.memory.service
        seeded_at = self.memory.clock.now() - SEED_AGE
        for row in self.scenario.rows:
            outcome = service.store.insert(
                self._draft(row), origin=WriteOrigin.IMPORT, now=seeded_at
            )
            if outcome.claim is None:
                self.failures.append(f"rows: {row.id} was not stored ({outcome.status.value})")
            else:
                self.ids[row.id] = outcome.claim.id
        for row_id in self.scenario.delete_ids:
            if row_id in self.ids:
                await service.delete(self.agent_id, self.ids[row_id])
        replayed = 0
        for row in self.scenario.replay_rows:
            replayed += await self._replay(row)
        refused = self._directives()
        if profile is Profile.EMBEDDED and not await service.warm(self.agent_id):
            self.failures.append("embedded: the agent's vectors did not become ready")
        turn = await self._turn()
        self._check(turn, replayed=replayed, refused=refused)
        return self._result(profile, turn)

    async def _replay(self, row: RowSpec) -> int:
        """1 when the model's write created a row, else 0 (duplicate or suppressed)."""
        draft = self._draft(row)
        service = self.memory.service
        if draft.temporal.is_atemporal:
            result = await service.remember(
                self.agent_id,
                row.content,
                session_id=row.session_id,
                scope=draft.scope,
                kind=ClaimKind(row.kind),
                importance=row.importance,
            )
            created = result.status is RememberStatus.STORED
            claim_id = result.claim_id
        else:
            # `remember` takes no temporal metadata; this is the store call it makes.
            outcome = service.store.insert(
                draft, origin=WriteOrigin.MODEL_TOOL, now=self.memory.clock.now()
            )
            created = outcome.status is InsertStatus.INSERTED
            claim_id = outcome.claim.id if outcome.claim is not None else None
        if created and claim_id is not None:
            self.ids[row.id] = claim_id
        return int(created)

    def _directives(self) -> int:
        service = self.memory.service
        refused = 0
        for spec in self.scenario.directives:
            kind = DirectiveKind(spec.kind)
            try:
                if spec.state == "active":
                    service.create_directive(self.agent_id, kind, spec.content, topic=spec.topic)
                else:
                    service.suggest_directive(self.agent_id, kind, spec.content, topic=spec.topic)
            except ValidationError:
                refused += 1
        return refused

    def _runtime(self) -> MemoryRuntime:
        service = self.memory.service
        if self.scenario.mode == Mode.WORKING:
            return service.session(self.agent_id, self.scenario.session)
        return MemoryRuntime(
            agent_id=self.agent_id,
            session_id=self.scenario.session,
            kind=SessionKind.MAIN,
            store=service.store,
            retrieval=service.retrieval,
            anchors=None,
            domain_clock=self.memory.clock,
            infra_clock=self.memory.clock,
            calls=service.retrieval.calls,
            settings=_recall_lane(service.settings),
        )

    async def _turn(self) -> TurnContribution:
        query = self.scenario.query if self.scenario.mode == Mode.RECALL else ""
        return await self._runtime().prepare_turn(
            f"{self.scenario.id}:turn", query, budget_tokens=self.scenario.budget
        )

    # --- checks ---------------------------------------------------------------------------
    def _fixture_ids(self, claim_ids: Sequence[str]) -> list[str]:
        back: dict[str, list[str]] = {}
        for row_id, claim_id in self.ids.items():
            back.setdefault(claim_id, []).append(row_id)
        return [row_id for claim_id in claim_ids for row_id in back.get(claim_id, [claim_id])]

    def _budget(self) -> int:
        return self.scenario.budget or self.memory.settings.contribution_budget_tokens

    def _check(self, turn: TurnContribution, *, replayed: int, refused: int) -> None:
        expected = self.scenario.expected
        fail = self.failures.append
        if turn.outcome is ContributionOutcome.FAILED_OPEN:
            fail("turn: failed open")
        selected = set(self._fixture_ids([item.id for item in turn.manifest.selected]))
        wanted = set(expected.selected_memory_ids)
        if selected != wanted:
            missing, extra = sorted(wanted - selected), sorted(selected - wanted)
            fail(f"selectedMemoryIds: missing {missing}, unexpected {extra}")
        for row_id in expected.excluded_memory_ids:
            if row_id in selected:
                fail(f"excludedMemoryIds: {row_id} was selected")
        memory_text = turn.memory_text or ""
        directive_text = turn.directive_text or ""
        for text, label, includes, excludes in (
            (memory_text, "section", expected.section_includes, expected.section_excludes),
            (
                directive_text,
                "directive",
                expected.directive_includes,
                expected.directive_excludes,
            ),
        ):
            for part in includes:
                if part not in text:
                    fail(f"{label}Includes: {part!r} is missing")
            for part in excludes:
                if part in text:
                    fail(f"{label}Excludes: {part!r} is present")
        self._check_annotations(memory_text)
        if expected.replay_created_count is not None and replayed != expected.replay_created_count:
            fail(f"replayCreatedCount: expected {expected.replay_created_count}, got {replayed}")
        if expected.refused_directive_count is not None and (
            refused != expected.refused_directive_count
        ):
            fail(
                f"refusedDirectiveCount: expected {expected.refused_directive_count}, got {refused}"
            )
        directives = len(turn.manifest.directives.selected)
        if expected.directive_count is not None and directives != expected.directive_count:
            fail(f"directiveCount: expected {expected.directive_count}, got {directives}")
        dropped = self._dropped(turn)
        for row_id, reason in expected.dropped_memory_ids.items():
            if dropped.get(row_id) != reason:
                fail(f"droppedMemoryIds: {row_id} expected {reason}, got {dropped.get(row_id)}")
        tokens = estimate_tokens(turn.text or "")
        if tokens > self._budget():
            fail(f"withinBudget: {tokens} tokens > budget {self._budget()}")

    def _check_annotations(self, memory_text: str) -> None:
        rows = {row.id: row for row in (*self.scenario.rows, *self.scenario.replay_rows)}
        lines = memory_text.splitlines()
        for row_id, part in self.scenario.expected.annotation_includes.items():
            shown = sanitize(rows[row_id].content.strip())
            own = [line for line in lines if line.startswith("- ") and shown in line]
            if not own:
                self.failures.append(f"annotationIncludes: {row_id} has no line")
            elif not any(part in line[line.index(shown) + len(shown) :] for line in own):
                self.failures.append(f"annotationIncludes: {row_id} lacks {part!r}")

    def _dropped(self, turn: TurnContribution) -> dict[str, str]:
        dropped: dict[str, str] = {}
        for item in turn.manifest.dropped:
            for row_id in self._fixture_ids([item.id]):
                dropped.setdefault(row_id, item.reason.value)
        return dropped

    def _result(self, profile: Profile, turn: TurnContribution) -> ScenarioResult:
        return ScenarioResult(
            id=self.scenario.id,
            axis=self.scenario.axis,
            mode=self.scenario.mode,
            profile=profile.value,
            failures=tuple(self.failures),
            selected=tuple(self._fixture_ids([item.id for item in turn.manifest.selected])),
            dropped=self._dropped(turn),
            estimated_tokens=estimate_tokens(turn.text or ""),
            budget=self._budget(),
            degradations=tuple(d.value for d in turn.manifest.degradations),
        )


def _recall_lane(settings: MemorySettings) -> MemorySettings:
    return attrs.evolve(settings, working_floor_tokens=0, working_ceiling_tokens=0)
