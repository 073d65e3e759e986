"""LoCoMo-format evidence retrieval on a synthetic conversation written here (R-BEYOND-2).

The real LoCoMo file is CC BY-NC and never enters the repository; `locomo-synthetic.json`
has the same shape (three sessions, 30 turns, 10 questions over categories 1–5, one gold
entry packing two dia ids, one naming a turn that does not exist).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from memory_plugins.eval.documents import locomo_document
from memory_plugins.eval.fixture_io import FixtureError
from memory_plugins.eval.locomo import LocomoReport, run_locomo
from memory_plugins.eval.locomo_format import load_locomo
from memory_plugins.eval.rankers import RankMode

SYNTHETIC = Path(__file__).parents[1] / "fixtures" / "locomo-synthetic.json"


@pytest.fixture(scope="module")
def report() -> LocomoReport:
    samples = load_locomo(SYNTHETIC)
    return asyncio.run(run_locomo(samples, path=SYNTHETIC, embedders=("hashing",)))


def test_every_turn_is_one_claim_and_category_5_is_left_out(report: LocomoReport) -> None:
    """R-BEYOND-2: one claim per dialogue turn; categories 1–4 by default; a question whose
    evidence names no turn is skipped and counted."""
    assert (report.samples, report.turns) == (1, 30)
    assert report.categories == (1, 2, 3, 4)
    assert report.skipped_questions == 1
    fts = next(m for m in report.modes if m.mode == RankMode.FTS.value)
    assert fts.questions == 8
    assert set(fts.categories) == {"1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"}


def test_packed_gold_evidence_is_split_into_dia_ids(report: LocomoReport) -> None:
    """R-BEYOND-2: "D2:9; D3:4" in a gold list means two evidence turns."""
    packed = next(q for q in report.questions if q.question == 5 and q.mode == "fts")
    assert packed.evidence == ("D2:9", "D3:4")


def test_lexical_evidence_is_found_at_the_top(report: LocomoReport) -> None:
    """R-BEYOND-2: 'Where did Tomas launch his sailboat?' finds D2:1 first by FTS, and the
    metrics follow from the rank of the first evidence turn."""
    launch = next(q for q in report.questions if q.question == 1 and q.mode == "fts")
    assert launch.first_evidence_rank == 1
    assert (launch.hit_at_5, launch.mrr_at_50) == (1.0, 1.0)
    for scores in report.modes:
        assert 0.0 < scores.r_at_5 <= scores.r_at_10 <= scores.r_at_20 <= 1.0, scores.label
        assert scores.tokens_at_10 > 0


def test_the_report_holds_no_conversation_text(report: LocomoReport) -> None:
    """R-BEYOND-2: a LoCoMo report carries indices, dia ids and numbers only (the real
    dataset's licence keeps its text out of files we write)."""
    text = json.dumps(locomo_document(report))
    data = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    for turn in data[0]["conversation"]["session_1"]:
        assert turn["text"] not in text
    for question in data[0]["qa"]:
        assert question["question"] not in text


def test_a_file_without_sessions_is_refused(tmp_path: Path) -> None:
    """R-BEYOND-2: the wrong file is a readable error naming where it went wrong."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps([{"conversation": {"speaker_a": "A"}, "qa": []}]), "utf-8")
    with pytest.raises(FixtureError, match=r"\$\[0\]\.conversation has no session_N turns"):
        load_locomo(path)
    path.write_text(json.dumps([{"conversation": {"session_1": [{"speaker": "A"}]}}]), "utf-8")
    with pytest.raises(FixtureError, match=r"session_1\[0\]\.dia_id: required field missing"):
        load_locomo(path)
