"""LoCoMo-format evidence retrieval: does recall find the dialogue turns a question rests on?

The format is read by `locomo_format.py`.

Evidence retrieval only, no model: each sample is one agent; every turn becomes one claim
`"<speaker>: <text>"`, verbatim, stored as of `now − 1 s` (equal recency — session dates are
not used, so the ranking rests on the text alone). Each question of the chosen categories
(1–4 by default; 5 has no answer) is ranked to depth 50 in every mode (`rankers.py`). Per
question: R@k = at least one evidence turn in the top k (k = 5, 10, 20), all@10 = every
evidence turn in the top 10, MRR@50 = 1/rank of the first evidence turn (0 beyond 50), and
the estimated tokens of the top-10 turns. Evidence ids that name no turn are ignored; a
question left with no evidence is skipped and counted.

Gates: fusion must not lose to its own lexical source — the default embedder's hybrid
ranking keeps FTS's R@10 and MRR@50 within 0.02 (`locomo_gates`; the LoCoMo dev baselines
showed RRF k=60 over full lists losing to plain BM25).

The dataset is CC BY-NC: the report holds question indices, dia ids and numbers — never text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from memory_core.domain.claims import ClaimDraft, ClaimKind, ClaimSource, WriteOrigin
from memory_core.domain.errors import ValidationError
from memory_core.domain.tokens import estimate_tokens
from memory_core.services.read.scoring import ScoringPolicy
from memory_plugins.config import MemoryConfig
from memory_plugins.eval.harness import (
    DEFAULT_EMBEDDER,
    EVAL_EPOCH,
    SEED_AGE,
    EvalMemory,
    FixedClock,
    eval_memory,
    eval_registry,
)
from memory_plugins.eval.locomo_format import (
    LocomoSample,
    LocomoTurn,
    evidence_ids,
    sessions_of,
)
from memory_plugins.eval.metrics import mrr_at, recall_at
from memory_plugins.eval.rankers import Rankers, RankMode
from memory_plugins.eval.scores import Gate, mean, policy_document, scoring_policy

__all__ = [
    "DEFAULT_CATEGORIES",
    "LocomoReport",
    "LocomoScores",
    "QuestionResult",
    "evaluate_locomo",
    "load_conversations",
    "locomo_gates",
    "run_locomo",
]

DEFAULT_CATEGORIES = (1, 2, 3, 4)
DEPTH = 50
GATE_TOLERANCE = 0.02
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


# --- results ------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class QuestionResult:
    sample: int
    question: int  # index in the sample's qa list
    category: int
    mode: str
    embedder: str | None
    evidence: tuple[str, ...]
    first_evidence_rank: int | None  # 1-based, within DEPTH
    hit_at_5: float
    hit_at_10: float
    hit_at_20: float
    all_at_10: float
    mrr_at_50: float
    tokens_at_10: int


@attrs.frozen(kw_only=True)
class LocomoScores:
    mode: str
    embedder: str | None
    questions: int
    r_at_5: float
    r_at_10: float
    r_at_20: float
    all_at_10: float
    mrr_at_50: float
    tokens_at_10: float
    categories: dict[str, dict[str, float]]
    degraded: int

    @property
    def label(self) -> str:
        return f"{self.mode} ({self.embedder})" if self.embedder else self.mode


@attrs.frozen(kw_only=True)
class LocomoReport:
    file: str
    samples: int
    turns: int
    categories: tuple[int, ...]
    skipped_questions: int  # no resolvable evidence
    embedders: tuple[str, ...]
    scoring: dict[str, Any]
    modes: tuple[LocomoScores, ...]
    gates: tuple[Gate, ...]
    questions: tuple[QuestionResult, ...]

    @property
    def passed(self) -> bool:
        return all(gate.passed for gate in self.gates)


# --- running ------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class _Conversation:
    agent_id: str
    index: int
    dia_claims: dict[str, str]  # dia id -> claim id
    contents: dict[str, str]  # claim id -> content (token counts only; never reported)


async def _store(memory: EvalMemory, sample: LocomoSample, index: int, path: Path) -> _Conversation:
    agent_id = f"locomo-{index:03d}"
    turns = [turn for session in sessions_of(sample, path=path, index=index) for turn in session]
    drafts: list[tuple[LocomoTurn, ClaimDraft]] = []
    for turn in turns:
        content = f"{turn.speaker}: {turn.text}"
        try:
            draft = ClaimDraft(
                agent_id=agent_id,
                kind=ClaimKind.EPISODIC,
                content=content,
                source=ClaimSource(session_id=turn.dia_id.split(":")[0], extractor="locomo"),
            )
        except ValidationError:
            continue  # an empty turn: nothing to remember
        drafts.append((turn, draft))
    outcomes = memory.service.store.insert_many(
        [draft for _, draft in drafts], origin=WriteOrigin.IMPORT, now=memory.clock.now() - SEED_AGE
    )
    dia_claims: dict[str, str] = {}
    contents: dict[str, str] = {}
    for (turn, draft), outcome in zip(drafts, outcomes, strict=True):
        if outcome.claim is not None:
            dia_claims[turn.dia_id] = outcome.claim.id
            contents[outcome.claim.id] = draft.content
    await memory.service.warm(agent_id)
    return _Conversation(agent_id=agent_id, index=index, dia_claims=dia_claims, contents=contents)


async def _score_mode(
    rankers: Rankers,
    conversations: Sequence[_Conversation],
    samples: Sequence[LocomoSample],
    mode: RankMode,
    *,
    embedder: str | None,
    categories: Sequence[int],
) -> tuple[LocomoScores, list[QuestionResult], int]:
    rankers.degraded = 0
    results: list[QuestionResult] = []
    skipped = 0
    for conversation, sample in zip(conversations, samples, strict=True):
        for number, question in enumerate(sample.qa):
            if question.category not in categories:
                continue
            evidence = [dia for dia in evidence_ids(question) if dia in conversation.dia_claims]
            if not evidence:
                skipped += 1
                continue
            relevant = {conversation.dia_claims[dia] for dia in evidence}
            ranking = await rankers.rank(mode, conversation.agent_id, question.question, DEPTH)
            first = next((i for i, claim in enumerate(ranking, 1) if claim in relevant), None)
            top10 = "\n".join(conversation.contents.get(claim, "") for claim in ranking[:10])
            results.append(
                QuestionResult(
                    sample=conversation.index,
                    question=number,
                    category=question.category,
                    mode=mode.value,
                    embedder=embedder if mode.needs_embedder else None,
                    evidence=tuple(evidence),
                    first_evidence_rank=first,
                    hit_at_5=float(first is not None and first <= 5),
                    hit_at_10=float(first is not None and first <= 10),
                    hit_at_20=float(first is not None and first <= 20),
                    all_at_10=float(recall_at(ranking, relevant, 10) == 1.0),
                    mrr_at_50=mrr_at(ranking, relevant, DEPTH),
                    tokens_at_10=estimate_tokens(top10) if top10 else 0,
                )
            )
    return _aggregate(mode, embedder, results, rankers.degraded), results, skipped


def _means(results: Sequence[QuestionResult]) -> dict[str, float]:
    return {
        "questions": float(len(results)),
        "r_at_5": mean(r.hit_at_5 for r in results),
        "r_at_10": mean(r.hit_at_10 for r in results),
        "r_at_20": mean(r.hit_at_20 for r in results),
        "all_at_10": mean(r.all_at_10 for r in results),
        "mrr_at_50": mean(r.mrr_at_50 for r in results),
        "tokens_at_10": mean(r.tokens_at_10 for r in results),
    }


def _aggregate(
    mode: RankMode, embedder: str | None, results: Sequence[QuestionResult], degraded: int
) -> LocomoScores:
    overall = _means(results)
    by_category: dict[int, list[QuestionResult]] = {}
    for result in results:
        by_category.setdefault(result.category, []).append(result)
    return LocomoScores(
        mode=mode.value,
        embedder=embedder if mode.needs_embedder else None,
        questions=len(results),
        r_at_5=overall["r_at_5"],
        r_at_10=overall["r_at_10"],
        r_at_20=overall["r_at_20"],
        all_at_10=overall["all_at_10"],
        mrr_at_50=overall["mrr_at_50"],
        tokens_at_10=overall["tokens_at_10"],
        categories={
            f"{category} {CATEGORY_NAMES.get(category, '')}".strip(): _means(members)
            for category, members in sorted(by_category.items())
        },
        degraded=degraded,
    )


def locomo_gates(modes: Sequence[LocomoScores], default_embedder: str) -> list[Gate]:
    """Fusion must not lose to its own lexical source (the LoCoMo dev lesson): the default
    embedder's hybrid ranking keeps FTS's R@10 and MRR@50, within 0.02 (3 of 150 questions)."""
    hybrid = next(m for m in modes if m.mode == "hybrid" and m.embedder == default_embedder)
    fts = next(m for m in modes if m.mode == "fts")
    return [
        Gate.at_least("hybrid R@10 vs FTS-0.02", hybrid.r_at_10, fts.r_at_10 - GATE_TOLERANCE),
        Gate.at_least(
            "hybrid MRR@50 vs FTS-0.02", hybrid.mrr_at_50, fts.mrr_at_50 - GATE_TOLERANCE
        ),
    ]


async def load_conversations(
    memory: EvalMemory, samples: Sequence[LocomoSample], path: Path
) -> list[_Conversation]:
    return [await _store(memory, sample, index, path) for index, sample in enumerate(samples)]


async def evaluate_locomo(
    memory: EvalMemory,
    conversations: Sequence[_Conversation],
    samples: Sequence[LocomoSample],
    modes: Sequence[RankMode],
    *,
    embedder: str | None,
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    scoring: ScoringPolicy | None = None,
) -> tuple[list[LocomoScores], list[QuestionResult], int]:
    rankers = Rankers(memory, scoring=scoring)
    scores: list[LocomoScores] = []
    details: list[QuestionResult] = []
    skipped = 0
    for mode in modes:
        found, results, skipped = await _score_mode(
            rankers, conversations, samples, mode, embedder=embedder, categories=categories
        )
        scores.append(found)
        details.extend(results)
    return scores, details, skipped


async def run_locomo(
    samples: Sequence[LocomoSample],
    *,
    path: Path,
    embedders: Sequence[str] = (DEFAULT_EMBEDDER,),
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    base: MemoryConfig | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> LocomoReport:
    if not embedders:
        raise ValidationError("embedders", "name at least one embedder")
    clock = FixedClock(EVAL_EPOCH)
    registry = eval_registry()
    modes: list[LocomoScores] = []
    details: list[QuestionResult] = []
    skipped = turns = 0
    policy: ScoringPolicy | None = None
    for position, embedder in enumerate(embedders):
        async with eval_memory(embedder, clock=clock, base=base, registry=registry) as memory:
            policy = scoring_policy(memory.settings, scoring)
            conversations = await load_conversations(memory, samples, path)
            turns = sum(len(c.dia_claims) for c in conversations)
            wanted = [RankMode.VECTOR, RankMode.HYBRID]
            if position == 0:
                wanted = [RankMode.FTS, RankMode.LEXICAL, *wanted]
            found, results, skipped = await evaluate_locomo(
                memory,
                conversations,
                samples,
                wanted,
                embedder=embedder,
                categories=categories,
                scoring=policy,
            )
            modes.extend(found)
            details.extend(results)
    assert policy is not None
    return LocomoReport(
        file=str(path),
        samples=len(samples),
        turns=turns,
        categories=tuple(categories),
        skipped_questions=skipped,
        embedders=tuple(embedders),
        scoring=policy_document(policy),
        modes=tuple(modes),
        gates=tuple(locomo_gates(modes, embedders[0])),
        questions=tuple(details),
    )
