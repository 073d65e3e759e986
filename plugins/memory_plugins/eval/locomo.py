"""LoCoMo-format evidence retrieval: does recall find the dialogue turns a question rests on?

The format is read by `locomo_format.py`.

Evidence retrieval only, no model: each sample is one agent; every turn becomes one claim
`"<speaker>: <text>"`, verbatim, recorded at its session's date (the claim's source time, as
a host's turn would be; a session without a readable date is stored as of `now − 1 s`). The
clock stands after every session, years after LoCoMo's, so recency is equal and cannot
decide a ranking. Each question of the chosen categories (1–4 by default; 5 has no answer)
is ranked to depth 50 in every mode (`rankers.py`). Per question: R@k = at least one evidence
turn in the top k (k = 1, 5, 10, 20), all@10 = every evidence turn in the top 10, sess@10 =
an evidence turn's session among the sessions of the top 10, MRR@10 and MRR@50 = 1/rank of
the first evidence turn (0 beyond the cut), the estimated tokens of the top-10 turns as the
recall lane renders them (`- ` lines, `estimate_tokens`), and the latency of the ranking
call. Evidence ids that name no turn are ignored; a question left with no evidence is skipped
and counted; a question named in the `exclude` set (`<sample id>:<question index>`) is
skipped and counted apart.

Conversations are stored and measured one after another — each agent is finished before the
next one is written — so any number of them runs within the open-store cap.

Gates: fusion must not lose to its own lexical source — the default embedder's hybrid
ranking keeps FTS's R@10 and MRR@50 within 0.02 (`locomo_gates`; the LoCoMo dev baselines
showed RRF k=60 over full lists losing to plain BM25).

The dataset is CC BY-NC: the report holds question indices, dia ids and numbers — never text.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from memory_core.domain.claims import ClaimDraft, ClaimKind, ClaimSource
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
    question_key,
    session_dates,
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
    "locomo_gates",
    "run_locomo",
    "select_conversations",
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
    hit_at_1: float
    hit_at_5: float
    hit_at_10: float
    hit_at_20: float
    all_at_10: float
    sess_at_10: float
    mrr_at_10: float
    mrr_at_50: float
    tokens_at_10: int
    latency_ms: float


@attrs.frozen(kw_only=True)
class LocomoScores:
    mode: str
    embedder: str | None
    questions: int
    r_at_1: float
    r_at_5: float
    r_at_10: float
    r_at_20: float
    all_at_10: float
    sess_at_10: float
    mrr_at_10: float
    mrr_at_50: float
    tokens_at_10: float
    latency_p50_ms: float
    latency_p95_ms: float
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
    excluded_questions: int  # named in the exclude set
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
    sessions: dict[str, str]  # claim id -> session ("D3")


def _session(dia_id: str) -> str:
    return dia_id.split(":", maxsplit=1)[0]


def _session_number(dia_id: str) -> int | None:
    digits = _session(dia_id)[1:]
    return int(digits) if digits.isdigit() else None


async def _store(memory: EvalMemory, sample: LocomoSample, index: int, path: Path) -> _Conversation:
    agent_id = f"locomo-{index:03d}"
    dates = session_dates(sample)
    seeded = memory.clock.now() - SEED_AGE
    by_time: dict[datetime, list[tuple[LocomoTurn, ClaimDraft]]] = {}
    for session in sessions_of(sample, path=path, index=index):
        for turn in session:
            content = f"{turn.speaker}: {turn.text}"
            try:
                draft = ClaimDraft(
                    agent_id=agent_id,
                    kind=ClaimKind.EPISODIC,
                    content=content,
                    source=ClaimSource(session_id=_session(turn.dia_id), extractor="locomo"),
                )
            except ValidationError:
                continue  # an empty turn: nothing to remember
            recorded = dates.get(_session_number(turn.dia_id) or 0, seeded)
            by_time.setdefault(min(recorded, seeded), []).append((turn, draft))
    dia_claims: dict[str, str] = {}
    contents: dict[str, str] = {}
    sessions: dict[str, str] = {}
    for recorded_at, drafts in sorted(by_time.items()):
        outcomes = await memory.service.import_claims(
            agent_id, [draft for _, draft in drafts], recorded_at=recorded_at
        )
        for (turn, draft), outcome in zip(drafts, outcomes, strict=True):
            if outcome.claim is not None:
                dia_claims[turn.dia_id] = outcome.claim.id
                contents[outcome.claim.id] = draft.content
                sessions[outcome.claim.id] = _session(turn.dia_id)
    await memory.service.warm(agent_id)
    return _Conversation(
        agent_id=agent_id,
        index=index,
        dia_claims=dia_claims,
        contents=contents,
        sessions=sessions,
    )


def _recall_lines(conversation: _Conversation, ranking: Sequence[str]) -> str:
    # The recall lane's line shape ("- " + content, one per line), so tokens@10 is what the
    # top 10 would cost a turn.
    return "\n".join("- " + conversation.contents.get(claim, "") for claim in ranking)


async def _score_conversation(
    rankers: Rankers,
    conversation: _Conversation,
    sample: LocomoSample,
    mode: RankMode,
    *,
    embedder: str | None,
    categories: Sequence[int],
    exclude: frozenset[str],
) -> tuple[list[QuestionResult], int, int]:
    """One conversation's questions in one mode: results, skipped, excluded."""
    results: list[QuestionResult] = []
    skipped = excluded = 0
    for number, question in enumerate(sample.qa):
        if question.category not in categories:
            continue
        if question_key(sample, conversation.index, number) in exclude:
            excluded += 1
            continue
        evidence = [dia for dia in evidence_ids(question) if dia in conversation.dia_claims]
        if not evidence:
            skipped += 1
            continue
        relevant = {conversation.dia_claims[dia] for dia in evidence}
        started = time.perf_counter()
        ranking = await rankers.rank(mode, conversation.agent_id, question.question, DEPTH)
        latency = 1000.0 * (time.perf_counter() - started)
        first = next((i for i, claim in enumerate(ranking, 1) if claim in relevant), None)
        wanted_sessions = {_session(dia) for dia in evidence}
        top_sessions = {conversation.sessions.get(claim) for claim in ranking[:10]}
        results.append(
            QuestionResult(
                sample=conversation.index,
                question=number,
                category=question.category,
                mode=mode.value,
                embedder=embedder if mode.needs_embedder else None,
                evidence=tuple(evidence),
                first_evidence_rank=first,
                hit_at_1=float(first == 1),
                hit_at_5=float(first is not None and first <= 5),
                hit_at_10=float(first is not None and first <= 10),
                hit_at_20=float(first is not None and first <= 20),
                all_at_10=float(recall_at(ranking, relevant, 10) == 1.0),
                sess_at_10=float(bool(wanted_sessions & top_sessions)),
                mrr_at_10=mrr_at(ranking, relevant, 10),
                mrr_at_50=mrr_at(ranking, relevant, DEPTH),
                tokens_at_10=estimate_tokens(_recall_lines(conversation, ranking[:10]))
                if ranking
                else 0,
                latency_ms=latency,
            )
        )
    return results, skipped, excluded


def _percentile(values: Sequence[float], fraction: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]


def _means(results: Sequence[QuestionResult]) -> dict[str, float]:
    return {
        "questions": float(len(results)),
        "r_at_1": mean(r.hit_at_1 for r in results),
        "r_at_5": mean(r.hit_at_5 for r in results),
        "r_at_10": mean(r.hit_at_10 for r in results),
        "r_at_20": mean(r.hit_at_20 for r in results),
        "all_at_10": mean(r.all_at_10 for r in results),
        "sess_at_10": mean(r.sess_at_10 for r in results),
        "mrr_at_10": mean(r.mrr_at_10 for r in results),
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
    latencies = sorted(r.latency_ms for r in results)
    return LocomoScores(
        mode=mode.value,
        embedder=embedder if mode.needs_embedder else None,
        questions=len(results),
        r_at_1=overall["r_at_1"],
        r_at_5=overall["r_at_5"],
        r_at_10=overall["r_at_10"],
        r_at_20=overall["r_at_20"],
        all_at_10=overall["all_at_10"],
        sess_at_10=overall["sess_at_10"],
        mrr_at_10=overall["mrr_at_10"],
        mrr_at_50=overall["mrr_at_50"],
        tokens_at_10=overall["tokens_at_10"],
        latency_p50_ms=_percentile(latencies, 0.5),
        latency_p95_ms=_percentile(latencies, 0.95),
        categories={
            f"{category} {CATEGORY_NAMES.get(category, '')}".strip(): _means(members)
            for category, members in sorted(by_category.items())
        },
        degraded=degraded,
    )


def locomo_gates(modes: Sequence[LocomoScores], default_embedder: str) -> list[Gate]:
    """Fusion must not lose to its own sources (the LoCoMo dev lesson): the default
    embedder's hybrid ranking keeps FTS's R@k at every k and its MRR@50, and the lexical
    mode's R@1 and MRR@10, each within 0.02 (3 of 150 questions)."""
    hybrid = next(m for m in modes if m.mode == "hybrid" and m.embedder == default_embedder)
    fts = next(m for m in modes if m.mode == "fts")
    lexical = next(m for m in modes if m.mode == "lexical")
    gates = [
        Gate.at_least(
            f"hybrid {name} vs FTS-0.02",
            getattr(hybrid, field),
            getattr(fts, field) - GATE_TOLERANCE,
        )
        for name, field in (
            ("R@1", "r_at_1"),
            ("R@5", "r_at_5"),
            ("R@10", "r_at_10"),
            ("R@20", "r_at_20"),
            ("MRR@50", "mrr_at_50"),
        )
    ]
    gates += [
        Gate.at_least(
            f"hybrid {name} vs lexical-0.02",
            getattr(hybrid, field),
            getattr(lexical, field) - GATE_TOLERANCE,
        )
        for name, field in (("R@1", "r_at_1"), ("MRR@10", "mrr_at_10"))
    ]
    return gates


def select_conversations(
    samples: Sequence[LocomoSample], names: Sequence[str] | None
) -> list[tuple[int, LocomoSample]]:
    """The samples `names` picks (sample ids, or 0-based positions), in file order; all of
    them when `names` is None. A name matching no sample is a ValidationError."""
    indexed = list(enumerate(samples))
    if names is None:
        return indexed
    wanted = set(names)
    chosen = [
        (index, sample)
        for index, sample in indexed
        if str(index) in wanted or (sample.sample_id is not None and sample.sample_id in wanted)
    ]
    known = {str(index) for index, _ in indexed} | {
        sample.sample_id for _, sample in indexed if sample.sample_id
    }
    unknown = sorted(wanted - known)
    if unknown:
        raise ValidationError("--conversations", f"no sample named {', '.join(unknown)}")
    return chosen


async def run_locomo(
    samples: Sequence[LocomoSample],
    *,
    path: Path,
    embedders: Sequence[str] = (DEFAULT_EMBEDDER,),
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    base: MemoryConfig | None = None,
    scoring: Mapping[str, Any] | None = None,
    conversations: Sequence[str] | None = None,
    exclude: frozenset[str] = frozenset(),
) -> LocomoReport:
    if not embedders:
        raise ValidationError("embedders", "name at least one embedder")
    chosen = select_conversations(samples, conversations)
    newest = max((d for _, s in chosen for d in session_dates(s).values()), default=EVAL_EPOCH)
    # After every session, so no dated turn lies in the future of the evaluation's clock.
    clock = FixedClock(max(EVAL_EPOCH, newest + timedelta(days=1)))
    registry = eval_registry()
    modes: list[LocomoScores] = []
    details: list[QuestionResult] = []
    skipped = excluded = turns = 0
    policy: ScoringPolicy | None = None
    for position, embedder in enumerate(embedders):
        wanted = [RankMode.VECTOR, RankMode.HYBRID]
        if position == 0:
            wanted = [RankMode.FTS, RankMode.LEXICAL, *wanted]
        per_mode: dict[RankMode, list[QuestionResult]] = {mode: [] for mode in wanted}
        degraded = dict.fromkeys(wanted, 0)
        skipped = excluded = turns = 0
        async with eval_memory(embedder, clock=clock, base=base, registry=registry) as memory:
            policy = scoring_policy(memory.settings, scoring)
            rankers = Rankers(memory, scoring=policy)
            # One conversation at a time: stored, measured in every mode, then left behind.
            for index, sample in chosen:
                conversation = await _store(memory, sample, index, path)
                turns += len(conversation.dia_claims)
                for mode in wanted:
                    rankers.degraded = 0
                    found, skip, excl = await _score_conversation(
                        rankers,
                        conversation,
                        sample,
                        mode,
                        embedder=embedder,
                        categories=categories,
                        exclude=exclude,
                    )
                    per_mode[mode].extend(found)
                    degraded[mode] += rankers.degraded
                skipped += skip
                excluded += excl
        for mode in wanted:
            modes.append(_aggregate(mode, embedder, per_mode[mode], degraded[mode]))
            details.extend(per_mode[mode])
    assert policy is not None
    return LocomoReport(
        file=str(path),
        samples=len(chosen),
        turns=turns,
        categories=tuple(categories),
        skipped_questions=skipped,
        excluded_questions=excluded,
        embedders=tuple(embedders),
        scoring=policy_document(policy),
        modes=tuple(modes),
        gates=tuple(locomo_gates(modes, embedders[0])),
        questions=tuple(details),
    )
