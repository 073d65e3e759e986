"""Decision neighbours from the retrieval service, over the in-memory fakes (reference §4.1,
§7.4): same scope, same owner, live rows, evidence mode."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import attrs
import pytest

from memory_adapters.offload import InlineCalls
from memory_contracts.fake_claim_store import InMemoryClaimStore
from memory_contracts.fake_providers import FakeEmbeddingProvider, ScriptedTextProvider
from memory_contracts.fake_vector_store import InMemoryVectorStore
from memory_contracts.fakes import ManualClock
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim, ClaimDraft, EmbeddingIdentity, Lifecycle, WriteOrigin
from memory_core.domain.errors import (
    ClearInProgress,
    DeadlineExceeded,
    OperationCancelled,
    ValidationError,
)
from memory_core.domain.scope import Scope, ScopeFilter
from memory_core.domain.temporal import Interval, TemporalMetadata
from memory_core.domain.temporal_policy import TemporalMode, assess
from memory_core.ports.extraction import CandidateClaim, ExtractionResult
from memory_core.services.providers.gateway.service import ProviderGateway
from memory_core.services.read.keywords import search_terms
from memory_core.services.read.neighbours import RetrievalNeighbours
from memory_core.services.read.retrieval.service import RetrievalService
from memory_core.services.vectors.index import VectorIndex
from memory_core.services.write.decision.service import (
    DecisionService,
    NeighbourFinder,
    WriteContext,
)
from memory_core.settings import MemorySettings

A, B = "agent-a", "agent-b"
SESSION = Scope.session("s1")


class ChallengerLeakingStore(InMemoryClaimStore):
    """A store whose re-validation lets challengers through as `conflicted` rows — the
    finder must not offer them to the decision model all the same."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.challengers: set[str] = set()

    def list_applicable_by_ids(
        self,
        agent_id: str,
        claim_ids: Sequence[str],
        *,
        scope_filter: ScopeFilter,
        embedding: EmbeddingIdentity | None = None,
        revisions: object = None,
    ) -> Sequence[Claim]:
        rows = super().list_applicable_by_ids(
            agent_id,
            claim_ids,
            scope_filter=scope_filter,
            embedding=embedding,
            revisions=revisions,  # type: ignore[arg-type]
        )
        return [
            attrs.evolve(row, lifecycle=Lifecycle.CONFLICTED) if row.id in self.challengers else row
            for row in rows
        ]


class World:
    def __init__(self, *, text: ScriptedTextProvider | None = None) -> None:
        self.clock = ManualClock(datetime(2026, 11, 30, 10, tzinfo=UTC))
        self.store = ChallengerLeakingStore(clock=self.clock)
        self.embedder = FakeEmbeddingProvider()
        self.gateway = ProviderGateway(
            clock=self.clock, embedder=self.embedder, text=text, settings=MemorySettings()
        )
        self.index = VectorIndex(
            store=self.store,
            vectors=InMemoryVectorStore(),
            gateway=self.gateway,
            domain_clock=self.clock,
        )
        self.retrieval = RetrievalService(
            store=self.store,
            domain_clock=self.clock,
            infra_clock=self.clock,
            calls=InlineCalls(),
            index=self.index,
            gateway=self.gateway,
            settings=MemorySettings(),
        )
        self.finder = RetrievalNeighbours(self.retrieval)

    def add(self, content: str, *, agent: str = A, **fields: object) -> Claim:
        outcome = self.store.insert(
            ClaimDraft(agent_id=agent, kind="semantic", content=content, **fields),  # type: ignore[arg-type]
            origin=WriteOrigin.USER_ADD,
            now=self.clock.now() - timedelta(days=1),
        )
        assert outcome.claim is not None
        return outcome.claim

    def find(
        self,
        *texts: str,
        scope: Scope | None = None,
        agent: str = A,
        finder: RetrievalNeighbours | None = None,
        cancel: CancellationToken | None = None,
        seconds: float = 30.0,
    ) -> list[list[str]]:
        found = asyncio.run(
            (finder or self.finder).find(
                agent,
                scope or Scope.agent(),
                texts,
                deadline=Deadline.after(self.clock, seconds),
                cancel=cancel or CancellationToken(),
            )
        )
        return [[claim.id for claim in claims] for claims in found]

    def warm(self) -> None:
        async def go() -> None:
            deadline, cancel = Deadline.after(self.clock, 30), CancellationToken()
            await self.index.drain(A, deadline=deadline, cancel=cancel)
            assert await self.index.warm(A, deadline=deadline, cancel=cancel)

        asyncio.run(go())


def test_it_is_the_decision_services_neighbour_finder() -> None:
    """§7.4: the port the llm decision mode takes."""
    assert isinstance(World().finder, NeighbourFinder)


def test_neighbours_come_from_exactly_the_writes_scope() -> None:
    """R-SCOPE-3: update, supersede and merge never cross scopes, so a write in one scope is
    never shown a neighbour of another — not Agent scope for a session write, nor the reverse."""
    world = World()
    agent_row = world.add("The user likes green tea")
    session_row = world.add("The user likes green tea", scope=SESSION)
    world.add("The user likes green tea", scope=Scope.user("u1"))
    world.add("The user likes green tea", scope=Scope.session("s2"))
    assert world.find("The user likes oolong tea", scope=SESSION) == [[session_row.id]]
    assert world.find("The user likes oolong tea") == [[agent_row.id]]


def test_neighbours_belong_to_the_owner_only() -> None:
    """R-READ-3, R-PRIV-2: another agent's identical text is never a neighbour."""
    world = World()
    world.add("The user likes green tea", agent=B)
    world.add("The user likes green tea", agent=B, scope=SESSION)
    assert world.find("The user likes oolong tea") == [[]]
    assert world.find("The user likes oolong tea", agent=B) != [[]]


def test_an_expired_state_is_still_a_neighbour() -> None:
    """R-TIME-3: decision retrieval is evidence mode — a confidently expired state leaves
    current recall but is exactly what a correction may supersede."""
    world = World()
    now = world.clock.now()
    expired = world.add(
        "The user's office is in Paris",
        temporal=TemporalMetadata(
            kind="state",
            interval=Interval(
                valid_from=now - timedelta(days=400), valid_until=now - timedelta(days=30)
            ),
            precision="day",
            timezone="Europe/Paris",
            confidence=0.95,
        ),
    )
    assert not assess(expired.temporal, now, mode=TemporalMode.CURRENT).eligible
    assert world.find("The user's office is in Lyon") == [[expired.id]]


def test_rows_that_are_not_live_are_never_neighbours() -> None:
    """§4.1: archived and superseded rows, and challengers (conflict participants), are not
    offered to the decision model."""
    world = World()
    archived = world.add("The user likes green tea")
    world.store.archive(A, archived.id, now=world.clock.now())
    old = world.add("The user likes black tea")
    world.store.supersede(
        A,
        old.id,
        ClaimDraft(agent_id=A, kind="semantic", content="The user likes white tea"),
        expected_revision=old.revision,
        now=world.clock.now(),
    )
    challenger = world.add("The user dislikes tea")
    world.store.challengers.add(challenger.id)
    (found,) = world.find("The user likes tea")
    contents = {world.store.get(A, claim_id).content for claim_id in found}
    assert contents == {"The user likes white tea"}


def test_one_list_per_text_best_first_capped_per_candidate() -> None:
    """§4.1: up to `per_candidate` neighbours for each candidate, in candidate order."""
    world = World()
    tea = [world.add(f"The user likes tea blend number {i}") for i in range(5)]
    hiking = world.add("The user goes hiking in the Alps")
    finder = RetrievalNeighbours(world.retrieval, per_candidate=2)
    found = world.find("tea blend", "hiking Alps", "", finder=finder)
    assert len(found) == 3
    assert len(found[0]) == 2 and set(found[0]) <= {claim.id for claim in tea}
    assert found[1] == [hiking.id]
    assert found[2] == []  # nothing to look for
    assert len(world.find("tea blend")[0]) == 3  # the default: three, as the reference


def test_vector_hits_are_neighbours_too() -> None:
    """R-READ-3: with the vector path warm, a neighbour sharing no keyword with the
    candidate is found by similarity and still re-validated against the store."""
    world = World()
    claim = world.add("ab")
    assert search_terms("ab") == ()  # too short for a keyword: only a vector can find it
    assert world.find("ab") == [[]]  # vectors still cold
    world.warm()
    assert world.find("ab") == [[claim.id]]


def test_a_pending_clear_raises_and_the_decision_falls_back_to_add() -> None:
    """R-FORGET-3, §7.4: a retrieval that cannot run costs the merge, never the fact."""
    world = World()
    world.add("The user likes green tea")
    world.store.begin_clear(A, now=world.clock.now())
    with pytest.raises(ClearInProgress):
        world.find("The user likes oolong tea")


def test_cancellation_and_the_deadline_stop_the_search() -> None:
    """R-PROV-3: cancellation reaches the neighbour search; an expired deadline ends it."""
    world = World()
    world.add("The user likes green tea")
    token = CancellationToken()
    token.cancel("shutdown")
    with pytest.raises(OperationCancelled):
        world.find("The user likes oolong tea", cancel=token)
    with pytest.raises(DeadlineExceeded):
        world.find("The user likes oolong tea", seconds=0)


@pytest.mark.parametrize("bad", [0, 101, True, 2.5])
def test_per_candidate_must_be_a_top_k(bad: object) -> None:
    """R-DOM-4: a typed error naming the field."""
    with pytest.raises(ValidationError) as caught:
        RetrievalNeighbours(World().retrieval, per_candidate=bad)  # type: ignore[arg-type]
    assert caught.value.field == "per_candidate"


def test_llm_decision_updates_a_neighbour_the_finder_supplied() -> None:
    """§7.4: with the finder, llm mode has neighbours: the model sees the same-scope row and
    its UPDATE supersedes it with the merged text; the session twin is left alone."""
    answer = {
        "decisions": [
            {
                "candidateIndex": 0,
                "decision": "UPDATE",
                "targetIndex": 0,
                "mergedContent": "The user likes green tea, especially sencha.",
            }
        ]
    }
    provider = ScriptedTextProvider([json.dumps(answer)])
    world = World(text=provider)
    target = world.add("The user likes green tea")
    twin = world.add("The user likes green tea", scope=SESSION)
    service = DecisionService(
        world.store, gateway=world.gateway, neighbours=world.finder, settings=MemorySettings()
    )
    assert service.llm_mode

    async def decide() -> tuple[str, ...]:
        plan = await service.plan(
            WriteContext(agent_id=A, now=world.clock.now(), scope=Scope.agent()),
            ExtractionResult(candidates=(CandidateClaim(content="The user likes sencha."),)),
            deadline=Deadline.after(world.clock, 30),
            cancel=CancellationToken(),
        )
        return service.apply(plan).stored_ids

    (new_id,) = asyncio.run(decide())
    (request,) = provider.requests
    assert "The user likes green tea" in request.messages[1].content
    assert world.store.get(A, target.id).superseded_by == new_id
    assert world.store.get(A, new_id).content == "The user likes green tea, especially sencha."
    assert world.store.get(A, twin.id).is_recallable


@pytest.mark.parametrize("known", [400, 50])
def test_the_prompt_shows_each_neighbour_cut_to_the_settings_length(known: int) -> None:
    """§7.4, SPEC §11: a stored neighbour enters the decision prompt cut to
    `decision_known_code_points` (400 by default), never whole."""
    provider = ScriptedTextProvider([json.dumps({"decisions": []})])
    world = World(text=provider)
    world.add("The user likes green tea. " + "é" * 1_000)
    service = DecisionService(
        world.store,
        gateway=world.gateway,
        neighbours=world.finder,
        settings=MemorySettings(decision_known_code_points=known),
    )

    asyncio.run(
        service.plan(
            WriteContext(agent_id=A, now=world.clock.now(), scope=Scope.agent()),
            ExtractionResult(candidates=(CandidateClaim(content="The user likes green tea."),)),
            deadline=Deadline.after(world.clock, 30),
            cancel=CancellationToken(),
        )
    )
    (request,) = provider.requests
    data = json.loads(request.messages[1].content.removeprefix("DATA:\n"))
    (shown,) = data["candidates"][0]["known"]
    assert len(shown["content"]) == known
