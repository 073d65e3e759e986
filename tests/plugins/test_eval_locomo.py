"""LoCoMo-format evidence retrieval on a synthetic conversation written here (R-BEYOND-2).

The real LoCoMo file is CC BY-NC and never enters the repository; `locomo-synthetic.json`
has the same shape (three sessions, 30 turns, 10 questions over categories 1–5, one gold
entry packing two dia ids, one naming a turn that does not exist).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import attrs
import pytest

from memory_core.domain.errors import ValidationError
from memory_plugins.eval.documents import locomo_document
from memory_plugins.eval.fixture_io import FixtureError
from memory_plugins.eval.locomo import LocomoReport, run_locomo
from memory_plugins.eval.locomo_format import load_exclude, load_locomo, session_dates
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


def test_each_question_reports_r_at_1_sessions_mrr_at_10_and_latency(
    report: LocomoReport,
) -> None:
    """R-BEYOND-2: R@1, sess@10, MRR@10 and the ranking call's latency per question, and
    aggregates that follow from them (R@1 ≤ R@5; sess@10 ≥ R@10: a found turn's session
    is among the top sessions)."""
    launch = next(q for q in report.questions if q.question == 1 and q.mode == "fts")
    assert (launch.hit_at_1, launch.mrr_at_10, launch.sess_at_10) == (1.0, 1.0, 1.0)
    for scores in report.modes:
        assert scores.r_at_1 <= scores.r_at_5, scores.label
        assert scores.sess_at_10 >= scores.r_at_10, scores.label
        assert scores.mrr_at_10 <= scores.mrr_at_50, scores.label
        assert 0.0 < scores.latency_p50_ms <= scores.latency_p95_ms, scores.label


def test_turns_are_recorded_at_their_session_date(tmp_path: Path) -> None:
    """R-BEYOND-2, R-TIME-1: a LoCoMo session date ("1:14 pm on 3 March, 2025") is read as a
    UTC instant, the source time of that session's turns; an unreadable one is left out."""
    sample = load_locomo(SYNTHETIC)[0]
    dates = session_dates(sample)
    assert dates[1] == datetime(2025, 3, 3, 13, 14, tzinfo=UTC)
    assert dates[3] == datetime(2025, 6, 2, 10, 5, tzinfo=UTC)
    odd = attrs.evolve(sample, conversation={**sample.conversation, "session_2_date_time": "?"})
    assert 2 not in session_dates(odd)


def test_excluded_questions_and_chosen_conversations(tmp_path: Path) -> None:
    """R-BEYOND-2: `--exclude` skips the questions it names (counted apart) and
    `--conversations` picks samples by id or position; an unknown name is refused."""
    exclude = tmp_path / "exclude.txt"
    exclude.write_text(
        "# audited gold answers\nsynthetic-1:1\n\nsynthetic-1:5  # packed\n", "utf-8"
    )
    keys = load_exclude(exclude)
    assert keys == {"synthetic-1:1", "synthetic-1:5"}
    samples = load_locomo(SYNTHETIC)
    found = asyncio.run(
        run_locomo(
            samples,
            path=SYNTHETIC,
            embedders=("hashing",),
            conversations=["synthetic-1"],
            exclude=keys,
        )
    )
    assert found.excluded_questions == 2
    assert {q.question for q in found.questions}.isdisjoint({1, 5})
    assert next(m for m in found.modes if m.mode == "fts").questions == 6
    with pytest.raises(ValidationError, match="no sample named conv-99"):
        asyncio.run(run_locomo(samples, path=SYNTHETIC, conversations=["conv-99"]))
    exclude.write_text("synthetic-1:1\nquestion one\n", "utf-8")
    with pytest.raises(FixtureError, match=r"exclude.txt:2: expected <sample id>:<question index>"):
        load_exclude(exclude)
