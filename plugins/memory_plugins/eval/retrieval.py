"""DeepChat's retrieval fixture: Recall@5, MRR@10, nDCG@10 per ranking mode, embedder and subset.

Format (reference §10.2): `{version: 1, vectorProfile?, corpus: [{id, agentId, kind, content,
importance}], queries: [{id, agentId, text, subsets, relevantIds}]}`. The corpus is stored
through the real claim store (one agent per `agentId`, every row as of `now − 1 s`, so
recency is equal), embedded and warmed; every query is then ranked by each `RankMode`
(see `rankers.py`) to depth 10. `fts` and `lexical` do not depend on the embedder and are
measured once; `vector` and `hybrid` once per embedder (the default first).

A row of another agent in any ranking is a cross-agent leak; the count must stay 0.

Gates (DeepChat's, on the first embedder's hybrid ranking): Recall@5 = 1.0 on the `exact`,
`cjk`, `path` and `code` subsets and at least FTS − 0.02 there; overall Recall@5 ≥ 0.95,
MRR@10 ≥ 0.85, nDCG@10 ≥ 0.85; no leak anywhere. DeepChat's semantic-ablation gate belongs
to its lexicon embedder and is not applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from memory_core.domain.claims import ClaimDraft, ClaimKind, ClaimSource, WriteOrigin
from memory_core.domain.errors import ValidationError
from memory_core.services.read.scoring import ScoringPolicy
from memory_plugins.config import MemoryConfig
from memory_plugins.eval.fixture_io import (
    FixtureError,
    fixture_converter,
    load_json,
    structure_fixture,
)
from memory_plugins.eval.harness import (
    DEFAULT_EMBEDDER,
    EVAL_EPOCH,
    SEED_AGE,
    EvalMemory,
    FixedClock,
    eval_memory,
    eval_registry,
)
from memory_plugins.eval.metrics import mrr_at, ndcg_at, recall_at
from memory_plugins.eval.rankers import Rankers, RankMode
from memory_plugins.eval.scores import Gate, mean, policy_document, scoring_policy

__all__ = [
    "CorpusRow",
    "ModeScores",
    "QueryResult",
    "QuerySpec",
    "RetrievalFixture",
    "RetrievalReport",
    "load_retrieval_fixture",
    "run_retrieval",
]

DEPTH = 10
GATED_SUBSETS = ("exact", "cjk", "path", "code")


# --- the format ---------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class CorpusRow:
    id: str
    agent_id: str
    kind: str
    content: str
    importance: float = 0.5


@attrs.frozen(kw_only=True)
class QuerySpec:
    id: str
    agent_id: str
    text: str
    subsets: tuple[str, ...]
    relevant_ids: tuple[str, ...]


@attrs.frozen(kw_only=True)
class RetrievalFixture:
    version: int
    corpus: tuple[CorpusRow, ...]
    queries: tuple[QuerySpec, ...]
    vector_profile: dict[str, Any] | None = None  # DeepChat's embedder; informational


_CONVERTER = fixture_converter(forbid_extra_keys=True)


def load_retrieval_fixture(path: Path) -> RetrievalFixture:
    fixture = structure_fixture(load_json(path), RetrievalFixture, path=path, converter=_CONVERTER)
    problems: list[str] = []
    if fixture.version != 1:
        problems.append(f"version {fixture.version} is not supported (only 1)")
    owners: dict[str, str] = {}
    for row in fixture.corpus:
        if row.id in owners:
            problems.append(f"corpus id {row.id!r} is used twice")
        owners[row.id] = row.agent_id
    seen: set[str] = set()
    for query in fixture.queries:
        if query.id in seen:
            problems.append(f"query id {query.id!r} is used twice")
        seen.add(query.id)
        if not query.relevant_ids:
            problems.append(f"query {query.id}: no relevantIds")
        for relevant in query.relevant_ids:
            if owners.get(relevant) != query.agent_id:
                problems.append(f"query {query.id}: {relevant!r} is not a row of its agent")
    if not fixture.queries:
        problems.append("no queries")
    if problems:
        raise FixtureError(f"{path}: " + "; ".join(problems[:8]))
    return fixture


# --- results ------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class QueryResult:
    query: str
    mode: str
    embedder: str | None
    ranking: tuple[str, ...]  # fixture row ids, best first
    recall_at_5: float
    mrr_at_10: float
    ndcg_at_10: float
    leaks: int


@attrs.frozen(kw_only=True)
class ModeScores:
    mode: str
    embedder: str | None  # None: the mode uses no embedder
    queries: int
    recall_at_5: float
    mrr_at_10: float
    ndcg_at_10: float
    subsets: dict[str, dict[str, float]]
    leaks: int
    degraded: int

    @property
    def label(self) -> str:
        return f"{self.mode} ({self.embedder})" if self.embedder else self.mode


@attrs.frozen(kw_only=True)
class RetrievalReport:
    fixture: str
    embedders: tuple[str, ...]
    scoring: dict[str, Any]
    modes: tuple[ModeScores, ...]
    gates: tuple[Gate, ...]
    queries: tuple[QueryResult, ...]

    @property
    def passed(self) -> bool:
        return all(gate.passed for gate in self.gates)

    def scores(self, mode: RankMode, embedder: str | None = None) -> ModeScores | None:
        return next(
            (s for s in self.modes if s.mode == mode.value and s.embedder == embedder), None
        )


# --- running ------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class _Loaded:
    """The corpus as stored in one evaluation memory: fixture id <-> claim id per agent."""

    memory: EvalMemory
    claim_ids: dict[str, str]  # fixture id -> claim id
    rows_of: dict[str, tuple[str, ...]]  # claim id -> fixture ids sharing it
    agent_claims: dict[str, frozenset[str]]  # agent -> its claim ids


async def load_corpus(memory: EvalMemory, corpus: Sequence[CorpusRow]) -> _Loaded:
    """Store and embed the corpus; rows of one agent go in one transaction."""
    seeded_at = memory.clock.now() - SEED_AGE
    by_agent: dict[str, list[CorpusRow]] = {}
    for row in corpus:
        by_agent.setdefault(row.agent_id, []).append(row)
    claim_ids: dict[str, str] = {}
    for agent_id, rows in by_agent.items():
        try:
            drafts = [
                ClaimDraft(
                    agent_id=agent_id,
                    kind=ClaimKind(row.kind),
                    content=row.content,
                    importance=row.importance,
                    source=ClaimSource(extractor="eval-fixture"),
                )
                for row in rows
            ]
        except (ValidationError, ValueError) as exc:
            raise FixtureError(f"corpus of agent {agent_id}: {exc}") from exc
        outcomes = memory.service.store.insert_many(
            drafts, origin=WriteOrigin.IMPORT, now=seeded_at
        )
        for row, outcome in zip(rows, outcomes, strict=True):
            if outcome.claim is not None:
                claim_ids[row.id] = outcome.claim.id
        await memory.service.warm(agent_id)
    rows_of: dict[str, list[str]] = {}
    for row_id, claim_id in claim_ids.items():
        rows_of.setdefault(claim_id, []).append(row_id)
    owner = {row.id: row.agent_id for row in corpus}
    agent_claims: dict[str, set[str]] = {}
    for row_id, claim_id in claim_ids.items():
        agent_claims.setdefault(owner[row_id], set()).add(claim_id)
    return _Loaded(
        memory=memory,
        claim_ids=claim_ids,
        rows_of={claim: tuple(rows) for claim, rows in rows_of.items()},
        agent_claims={agent: frozenset(ids) for agent, ids in agent_claims.items()},
    )


async def evaluate_modes(
    loaded: _Loaded,
    queries: Sequence[QuerySpec],
    modes: Sequence[RankMode],
    *,
    embedder: str | None,
    scoring: ScoringPolicy | None = None,
) -> tuple[list[ModeScores], list[QueryResult]]:
    """Rank every query in every mode over one loaded corpus."""
    rankers = Rankers(loaded.memory, scoring=scoring)
    scores: list[ModeScores] = []
    details: list[QueryResult] = []
    for mode in modes:
        rankers.degraded = 0
        results: list[tuple[QuerySpec, QueryResult]] = []
        for query in queries:
            claims = await rankers.rank(mode, query.agent_id, query.text, DEPTH)
            own = loaded.agent_claims.get(query.agent_id, frozenset())
            leaks = sum(1 for claim in claims if claim not in own)
            ranking = [row for claim in claims for row in loaded.rows_of.get(claim, (claim,))]
            relevant = set(query.relevant_ids)
            results.append(
                (
                    query,
                    QueryResult(
                        query=query.id,
                        mode=mode.value,
                        embedder=embedder if mode.needs_embedder else None,
                        ranking=tuple(ranking[:DEPTH]),
                        recall_at_5=recall_at(ranking, relevant, 5),
                        mrr_at_10=mrr_at(ranking, relevant, 10),
                        ndcg_at_10=ndcg_at(ranking, relevant, 10),
                        leaks=leaks,
                    ),
                )
            )
        scores.append(_aggregate(mode, embedder, results, degraded=rankers.degraded))
        details.extend(result for _, result in results)
    return scores, details


def _aggregate(
    mode: RankMode,
    embedder: str | None,
    results: Sequence[tuple[QuerySpec, QueryResult]],
    *,
    degraded: int,
) -> ModeScores:
    subsets: dict[str, list[QueryResult]] = {}
    for query, result in results:
        for subset in query.subsets:
            subsets.setdefault(subset, []).append(result)
    only = [result for _, result in results]
    return ModeScores(
        mode=mode.value,
        embedder=embedder if mode.needs_embedder else None,
        queries=len(only),
        recall_at_5=mean(r.recall_at_5 for r in only),
        mrr_at_10=mean(r.mrr_at_10 for r in only),
        ndcg_at_10=mean(r.ndcg_at_10 for r in only),
        subsets={
            name: {
                "recall_at_5": mean(r.recall_at_5 for r in members),
                "mrr_at_10": mean(r.mrr_at_10 for r in members),
                "ndcg_at_10": mean(r.ndcg_at_10 for r in members),
            }
            for name, members in sorted(subsets.items())
        },
        leaks=sum(r.leaks for r in only),
        degraded=degraded,
    )


def retrieval_gates(modes: Sequence[ModeScores], default_embedder: str) -> list[Gate]:
    hybrid = next(m for m in modes if m.mode == "hybrid" and m.embedder == default_embedder)
    fts = next(m for m in modes if m.mode == "fts")
    gates: list[Gate] = []
    for subset in GATED_SUBSETS:
        if subset not in hybrid.subsets:
            continue
        value = hybrid.subsets[subset]["recall_at_5"]
        gates.append(Gate.at_least(f"hybrid Recall@5 {subset}", value, 1.0))
        floor = fts.subsets.get(subset, {}).get("recall_at_5", 0.0) - 0.02
        gates.append(Gate.at_least(f"hybrid Recall@5 {subset} vs FTS-0.02", value, floor))
    gates.append(Gate.at_least("hybrid Recall@5 overall", hybrid.recall_at_5, 0.95))
    gates.append(Gate.at_least("hybrid MRR@10 overall", hybrid.mrr_at_10, 0.85))
    gates.append(Gate.at_least("hybrid nDCG@10 overall", hybrid.ndcg_at_10, 0.85))
    gates.append(Gate.at_most("cross-agent leaks", sum(m.leaks for m in modes), 0))
    return gates


async def run_retrieval(
    fixture: RetrievalFixture,
    *,
    path: Path,
    embedders: Sequence[str] = (DEFAULT_EMBEDDER, "hashing"),
    base: MemoryConfig | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> RetrievalReport:
    """Measure every mode; gates on the first embedder's hybrid ranking."""
    if not embedders:
        raise ValidationError("embedders", "name at least one embedder")
    clock = FixedClock(EVAL_EPOCH)
    registry = eval_registry()
    modes: list[ModeScores] = []
    details: list[QueryResult] = []
    policy: ScoringPolicy | None = None
    for position, embedder in enumerate(embedders):
        async with eval_memory(embedder, clock=clock, base=base, registry=registry) as memory:
            policy = scoring_policy(memory.settings, scoring)
            loaded = await load_corpus(memory, fixture.corpus)
            wanted = [RankMode.VECTOR, RankMode.HYBRID]
            if position == 0:
                wanted = [RankMode.FTS, RankMode.LEXICAL, *wanted]
            found, queries = await evaluate_modes(
                loaded, fixture.queries, wanted, embedder=embedder, scoring=policy
            )
            modes.extend(found)
            details.extend(queries)
    assert policy is not None
    return RetrievalReport(
        fixture=str(path),
        embedders=tuple(embedders),
        scoring=policy_document(policy),
        modes=tuple(modes),
        gates=tuple(retrieval_gates(modes, embedders[0])),
        queries=tuple(details),
    )
