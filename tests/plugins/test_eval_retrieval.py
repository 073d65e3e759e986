"""Retrieval metrics over DeepChat's fixture format, through the real stores (R-BEYOND-2).

A small corpus written here (two agents, identical rows in both) and the hashing embedder
keep these fast; the real fixture and the MiniLM column are measured by the CLI.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.settings import MemorySettings
from memory_plugins.eval.fixture_io import FixtureError
from memory_plugins.eval.rankers import RankMode
from memory_plugins.eval.retrieval import (
    RetrievalReport,
    load_retrieval_fixture,
    run_retrieval,
)

DEEPCHAT = Path(__file__).parents[1] / "fixtures" / "deepchat" / "retrieval-v1.json"


def _corpus() -> list[dict[str, Any]]:
    rows = []
    for agent, importance in (("agent-a", 0.8), ("agent-b", 0.9)):
        for key, content in (
            ("path", "Deployment settings live at /srv/tools/deploy.yaml."),
            ("lunch", "The team lunch is on Fridays at the harbour cafe."),
            ("cjk", "用户偏好简洁中文回答，避免冗长铺垫。"),
            ("noise", "Unrelated gardening note about soil and watering."),
        ):
            rows.append(
                {
                    "id": f"{agent}-{key}",
                    "agentId": agent,
                    "kind": "semantic",
                    "content": content,
                    "importance": importance,
                }
            )
    return rows


def _query(query_id: str, agent: str, text: str, subset: str, relevant: str) -> dict[str, Any]:
    return {
        "id": query_id,
        "agentId": agent,
        "text": text,
        "subsets": [subset],
        "relevantIds": [relevant],
    }


def _write(tmp_path: Path, queries: list[dict[str, Any]]) -> Path:
    path = tmp_path / "retrieval.json"
    document = {"version": 1, "corpus": _corpus(), "queries": queries}
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


QUERIES = [
    _query("q-path", "agent-a", "/srv/tools/deploy.yaml", "path", "agent-a-path"),
    _query("q-lunch", "agent-b", "team lunch Fridays", "exact", "agent-b-lunch"),
    _query("q-cjk", "agent-a", "偏好简洁中文回答", "cjk", "agent-a-cjk"),
]


def _run(path: Path) -> RetrievalReport:
    fixture = load_retrieval_fixture(path)
    return asyncio.run(run_retrieval(fixture, path=path, embedders=("hashing",)))


def test_every_mode_finds_the_relevant_row_and_never_another_agents(tmp_path: Path) -> None:
    """R-BEYOND-2, R-PRIV-2: Recall@5, MRR@10, nDCG@10 per mode and subset; an identical row
    of the other agent (more important) is never returned, so the leak counter stays 0."""
    report = _run(_write(tmp_path, QUERIES))

    assert [m.label for m in report.modes] == [
        "fts",
        "lexical",
        "vector (hashing)",
        "hybrid (hashing)",
    ]
    for mode in report.modes:
        assert mode.leaks == 0, mode.label
        assert mode.recall_at_5 == 1.0, mode.label
        assert mode.mrr_at_10 == 1.0, mode.label
        assert set(mode.subsets) == {"path", "exact", "cjk"}
    for result in report.queries:
        owner = "agent-a" if result.query in ("q-path", "q-cjk") else "agent-b"
        assert all(row.startswith(owner) for row in result.ranking), result
    assert report.passed
    assert report.scoring["rrf_k"] == MemorySettings().rrf_k


def test_a_missed_relevant_row_fails_the_gates(tmp_path: Path) -> None:
    """R-BEYOND-2: a query whose relevant row shares nothing with it lowers the hybrid
    numbers below DeepChat's gates, and the report says so."""
    missed = _query("q-miss", "agent-a", "zeppelin", "exact", "agent-a-lunch")
    report = _run(_write(tmp_path, [*QUERIES, missed]))

    hybrid = report.scores(RankMode.HYBRID, "hashing")
    assert hybrid is not None
    assert hybrid.subsets["exact"]["recall_at_5"] == 0.5  # q-lunch found, q-miss not
    failed = {gate.name for gate in report.gates if not gate.passed}
    assert "hybrid Recall@5 exact" in failed
    assert "hybrid Recall@5 overall" in failed
    assert not report.passed


def test_scoring_overrides_reach_the_hybrid_ranking(tmp_path: Path) -> None:
    """R-READ-8: the fusion constants a report used are the ones asked for."""
    fixture = load_retrieval_fixture(_write(tmp_path, QUERIES))
    report = asyncio.run(
        run_retrieval(
            fixture,
            path=tmp_path,
            embedders=("hashing",),
            scoring={"rrf_k": 5, "rrf_depth": 20},
        )
    )

    assert (report.scoring["rrf_k"], report.scoring["rrf_depth"]) == (5, 20)


def test_the_deepchat_retrieval_fixture_is_valid() -> None:
    """R-BEYOND-2: DeepChat's 240-row, 60-query fixture reads through our converter."""
    fixture = load_retrieval_fixture(DEEPCHAT)

    assert (len(fixture.corpus), len(fixture.queries)) == (240, 60)
    assert {s for q in fixture.queries for s in q.subsets} == {
        "exact",
        "cjk",
        "path",
        "code",
        "semantic",
        "mixed",
    }


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (_query("q", "agent-a", "x", "exact", "agent-b-lunch"), "not a row of its agent"),
        (_query("q", "agent-a", "x", "exact", "ghost"), "not a row of its agent"),
        ({**_query("q", "agent-a", "x", "exact", "agent-a-lunch"), "relevantIds": []}, "no rel"),
    ],
)
def test_a_query_must_name_rows_of_its_own_agent(
    tmp_path: Path, query: dict[str, Any], message: str
) -> None:
    """R-BEYOND-2: relevance judgements that name another agent's row are refused."""
    with pytest.raises(FixtureError, match=message):
        load_retrieval_fixture(_write(tmp_path, [query]))
