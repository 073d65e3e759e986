"""`agent-memory reindex`: every claim embedded again with the configured embedder.

R-HOST-2 (reindex, `--json`), R-PROV-4 (a namespace of another model is rebuilt, never
mixed), R-VEC-4 (the warm-up after it earns a ready certificate), R-STORE-2 (vectors are a
projection of the claims).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_memory_support import HASHING, Cli

HASHING_128 = HASHING + "[plugins.embedding_provider.options]\ndimensions = 128\n"
FACTS = ("The user likes green tea.", "The user lives in Oslo.", "The user plays the cello.")


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    cli = Cli(tmp_path, capsys, HASHING)
    for fact in FACTS:
        cli.json("remember", "--agent", "ana", fact)
    return cli


def test_reindex_embeds_every_claim_and_earns_the_certificate(cli: Cli) -> None:
    """R-VEC-4: all claims re-embedded, none left pending, vector recall ready."""
    document = cli.json("reindex", "--agent", "ana")

    assert document["claims"] == document["embedded"] == len(FACTS)
    assert document["pending"] == 0 and document["ready"] is True
    recall = cli.json("recall", "--agent", "ana", "green tea")
    assert "vector" in recall["items"][0]["sources"]


def test_after_an_embedder_change_reindex_rebuilds_the_namespace(cli: Cli) -> None:
    """R-PROV-4: doctor flags vectors of another model; reindex rebuilds them for the new
    one; vector recall works again with the new identity."""
    cli.json("reindex", "--agent", "ana")
    cli.config.write_text(HASHING_128, encoding="utf-8")
    cli.json("doctor", "--agent", "ana", expect=3)

    document = cli.json("reindex", "--agent", "ana")

    assert document["embedded"] == len(FACTS) and document["ready"] is True
    doctor = cli.json("doctor", "--agent", "ana")
    (agent,) = doctor["agents"]
    assert agent["vector_identity"]["dim"] == 128
    assert agent["vectors"] == agent["ready_claims"] == len(FACTS)
    recall = cli.json("recall", "--agent", "ana", "cello")
    assert "vector" in recall["items"][0]["sources"]


def test_reindex_without_vectors_is_a_config_error(cli: Cli) -> None:
    cli.config.write_text('[plugins.embedding_provider]\nname = "none"\n', encoding="utf-8")

    code, out, err = cli.run("reindex", "--agent", "ana")

    assert code == 2 and out == ""
    assert "reindex needs an embedding_provider and a vector_store" in err


def test_text_output_is_one_summary_line(cli: Cli) -> None:
    code, out, _ = cli.run("reindex", "--agent", "ana")

    assert code == 0
    [line] = out.splitlines()
    assert line.startswith("reindexed ana: 3 of 3 claims embedded, 0 pending; vector recall ready")
