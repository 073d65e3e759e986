"""The ingestion pipeline without the model (`benchmarks.ingestion`): bulk on an embedder that
answers at once, so its CPU per claim is the pipeline's own — extraction, the claim and vector
stores, the drain, the working rebuild — and bulk's ceiling from it beside the model's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.ingestion.modes import bulk, calls, contents, open_service, say
from memory_adapters.local_embedder import MINILM_DIMENSIONS
from memory_adapters.tapes import InMemoryTape
from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.ports.providers import EmbeddingPurpose

__all__ = ["InstantEmbedder", "ceiling", "pipeline_alone"]


class InstantEmbedder:
    """An embedder that costs nothing: one fixed unit vector per text, so a run on it is the
    pipeline's own work (extraction, the stores, the drain) without the model's."""

    provider_id = "bench"
    model_id = "instant"

    def __init__(self, dimensions: int) -> None:
        self._vector = (1.0, *([0.0] * (dimensions - 1)))
        self._dimensions = dimensions

    async def dimensions(self, *, deadline: Deadline, cancel: CancellationToken) -> int:
        return self._dimensions

    async def embed(
        self,
        texts: Sequence[str],
        *,
        purpose: EmbeddingPurpose,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[Sequence[float]]:
        return [self._vector] * len(texts)

    async def aclose(self) -> None:
        return None


async def pipeline_alone(root: Path, texts: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Bulk on an instant embedder, once per list of `texts`: the process CPU the pipeline
    spends per claim besides the model's (the run of median CPU per claim, every run's beside
    it). Inside the same clock as bulk: from `after_turn_settled` to the last embedded claim."""
    tape = InMemoryTape()
    memory = open_service(root, tape, InstantEmbedder(MINILM_DIMENSIONS))
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
