"""The ingestion benchmark's pipeline-alone line (issue 15, R-BEYOND-3): bulk on an embedder
that costs nothing, so its CPU per claim is the pipeline's own, and bulk's ceiling from it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks.ingestion import messages
from benchmarks.ingestion.alone import ceiling, pipeline_alone


def test_bulk_on_the_instant_embedder_embeds_every_claim_and_counts_its_cpu(
    tmp_path: Path,
) -> None:
    runs = [messages(6, seed=0), messages(6, seed=6), messages(6, seed=12)]
    # `_bulk` returns only once no claim is pending its embedding: a bounded wait proves
    # the instant vectors were accepted and written.
    report = asyncio.run(asyncio.wait_for(pipeline_alone(tmp_path, runs), timeout=120))
    assert report["claims"] >= 5  # the templates become about one claim each
    assert len(report["cpu_ms_per_claim_runs"]) == 3
    assert report["cpu_ms_per_claim"] > 0
    assert sorted(report["cpu_ms_per_claim_runs"])[1] == report["cpu_ms_per_claim"]  # median


@pytest.mark.parametrize(
    ("model_cpu_seconds", "claims", "pipeline_ms", "expected"),
    [(0.4, 100, 1.0, 0.8), (0.6, 100, 0.0, 1.0), (0.3, 150, 2.0, 0.5)],
)
def test_the_ceiling_is_the_models_share_of_the_cpu_per_claim(
    model_cpu_seconds: float, claims: int, pipeline_ms: float, expected: float
) -> None:
    bulk = {"baseline_cpu_seconds": model_cpu_seconds, "claims": claims}
    found = ceiling(bulk, {"cpu_ms_per_claim": pipeline_ms})
    assert found["ratio"] == pytest.approx(expected)
    assert found["model_cpu_ms_per_claim"] == pytest.approx(1000 * model_cpu_seconds / claims)
