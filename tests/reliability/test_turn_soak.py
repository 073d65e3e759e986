"""A small soak of the turn promise, the CI version of `python -m benchmarks turn_soak`
(R-READ-1, R-HOST-1): agents' turns under background ingestion, model writes, forgets,
clears and another process taking SQLite's write lock in bursts."""

from __future__ import annotations

import pytest

from benchmarks import turn_soak


@pytest.mark.slow
def test_no_turn_passes_its_deadline_and_no_anchor_is_lost_under_load() -> None:
    """R-READ-1, R-HOST-1: 0 turns past the soft deadline + 1 s, 0 view anchors lost, every
    agent healthy afterwards, and the store file intact: SQLite's and the FTS index's own
    integrity checks, one FTS row per recallable claim."""
    report = turn_soak.run(agents=4, turns=40, deadline_ms=1_000, lock_every=0.7, lock_hold=0.4)
    assert report["turns"] == 160
    assert report["past_deadline_plus_margin"] == 0, report
    assert report["anchors_expected"] > 0 and report["anchors_lost"] == 0, report
    assert report["clears"] >= 1 and report["healthy"], report
    integrity = report["integrity"]
    assert integrity["integrity_check"] == "ok" and integrity["fts_integrity_ok"], integrity
    assert integrity["fts_rows"] == integrity["recallable_claims"] > 0, integrity
