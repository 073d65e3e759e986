"""The run: choose the conversations, then per embedder store each one and rank its questions in
every mode, one conversation at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from memory_core.domain.errors import ValidationError
from memory_core.services.read.scoring import ScoringPolicy
from memory_plugins.config import MemoryConfig
from memory_plugins.eval.harness import (
    DEFAULT_EMBEDDER,
    EVAL_EPOCH,
    FixedClock,
    eval_memory,
    eval_registry,
)
from memory_plugins.eval.locomo.aggregate import aggregate, locomo_gates
from memory_plugins.eval.locomo.conversations import store_conversation
from memory_plugins.eval.locomo.questions import score_conversation
from memory_plugins.eval.locomo.report import LocomoReport, LocomoScores, QuestionResult
from memory_plugins.eval.locomo_format import LocomoSample, session_dates
from memory_plugins.eval.rankers import Rankers, RankMode
from memory_plugins.eval.scores import policy_document, scoring_policy

__all__ = ["DEFAULT_CATEGORIES", "run_locomo", "select_conversations"]

DEFAULT_CATEGORIES = (1, 2, 3, 4)


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
                conversation = await store_conversation(memory, sample, index, path)
                turns += len(conversation.dia_claims)
                for mode in wanted:
                    rankers.degraded = 0
                    found, skip, excl = await score_conversation(
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
            modes.append(aggregate(mode, embedder, per_mode[mode], degraded[mode]))
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
