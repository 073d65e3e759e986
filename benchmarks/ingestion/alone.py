"""The ingestion pipeline without the model (`benchmarks.ingestion`): bulk on an embedder that
answers at once, so its CPU per claim is the pipeline's own — extraction, the claim and vector
stores, the drain, the working rebuild — and bulk's ceiling from it beside the model's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.ingestion.modes import bulk, calls, contents, open_service, say
from benchmarks.recall import FixedQueryEmbedder
from memory_adapters.local_embedder import MINILM_DIMENSIONS
from memory_adapters.tapes import InMemoryTape

__all__ = ["ceiling", "pipeline_alone"]


async def pipeline_alone(root: Path, texts: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Bulk on an instant embedder (one fixed vector for every text), once per list of
    `texts`: the process CPU the pipeline spends per claim besides the model's (the run of
    median CPU per claim, every run's beside it). Inside the same clock as bulk: from
    `after_turn_settled` to the last embedded claim."""
    tape = InMemoryTape()
    memory = open_service(root, tape, FixedQueryEmbedder(MINILM_DIMENSIONS))
    rows: list[dict[str, Any]] = []
    try:
        await memory.gateway.warm(agent_id="bench-warm", **calls())
        for repeat, run_texts in enumerate(texts):
            agent = f"bench-instant-{repeat}"
            timed = await bulk(memory, tape, run_texts, agent)
            claims = len(contents(memory, agent))
            rows.append(
                {
                    "claims": claims,
                    "seconds": round(timed.seconds, 3),
                    "cpu_seconds": round(timed.cpu, 3),
                    "cpu_ms_per_claim": round(1000 * timed.cpu / max(claims, 1), 3),
                }
            )
            say(f"  pipeline alone {repeat + 1}/{len(texts)}: {rows[-1]}")
    finally:
        await memory.aclose()
    ordered = sorted(rows, key=lambda row: row["cpu_ms_per_claim"])
    return {
        **ordered[(len(ordered) - 1) // 2],
        "cpu_ms_per_claim_runs": [row["cpu_ms_per_claim"] for row in rows],
    }


def ceiling(bulk: dict[str, Any], pipeline: dict[str, Any]) -> dict[str, float]:
    """The most bulk's ratio can be where the model alone fills every core: then nothing
    runs beside it for free, and the pipeline's CPU adds to the model's."""
    model = 1000 * bulk["baseline_cpu_seconds"] / bulk["claims"]
    besides = pipeline["cpu_ms_per_claim"]
    return {
        "model_cpu_ms_per_claim": round(model, 3),
        "pipeline_cpu_ms_per_claim": besides,
        "ratio": round(model / (model + besides), 3),
    }
