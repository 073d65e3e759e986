"""Per-question results folded into one mode's scores (overall and per category), and the gates
over the modes' scores."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from memory_plugins.eval.locomo.report import LocomoScores, QuestionResult
from memory_plugins.eval.rankers import RankMode
from memory_plugins.eval.scores import Gate, mean

__all__ = ["aggregate", "locomo_gates"]

GATE_TOLERANCE = 0.02
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


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


def aggregate(
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
