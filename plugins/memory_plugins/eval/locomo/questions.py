"""One stored conversation's questions ranked in one mode and measured against their evidence."""

from __future__ import annotations

import time
from collections.abc import Sequence

from memory_core.domain.tokens import estimate_tokens
from memory_plugins.eval.locomo.conversations import StoredConversation, session_of
from memory_plugins.eval.locomo.report import QuestionResult
from memory_plugins.eval.locomo_format import LocomoSample, evidence_ids, question_key
from memory_plugins.eval.metrics import mrr_at, recall_at
from memory_plugins.eval.rankers import Rankers, RankMode

__all__ = ["DEPTH", "score_conversation"]

DEPTH = 50


def _recall_lines(conversation: StoredConversation, ranking: Sequence[str]) -> str:
    # The recall lane's line shape ("- " + content, one per line), so tokens@10 is what the
    # top 10 would cost a turn.
    return "\n".join("- " + conversation.contents.get(claim, "") for claim in ranking)


async def score_conversation(
    rankers: Rankers,
    conversation: StoredConversation,
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
        wanted_sessions = {session_of(dia) for dia in evidence}
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
