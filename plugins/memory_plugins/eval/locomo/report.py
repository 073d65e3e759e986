"""What a LoCoMo run reports: per question, per mode, and the whole run with its gates.

Numbers and ids only, never dialogue text (the dataset is CC BY-NC)."""

from __future__ import annotations

from typing import Any

import attrs

from memory_plugins.eval.scores import Gate

__all__ = ["LocomoReport", "LocomoScores", "QuestionResult"]


@attrs.frozen(kw_only=True)
class QuestionResult:
    sample: int
    question: int  # index in the sample's qa list
    category: int
    mode: str
    embedder: str | None
    evidence: tuple[str, ...]
    first_evidence_rank: int | None  # 1-based, within DEPTH
    hit_at_1: float
    hit_at_5: float
    hit_at_10: float
    hit_at_20: float
    all_at_10: float
    sess_at_10: float
    mrr_at_10: float
    mrr_at_50: float
    tokens_at_10: int
    latency_ms: float


@attrs.frozen(kw_only=True)
class LocomoScores:
    mode: str
    embedder: str | None
    questions: int
    r_at_1: float
    r_at_5: float
    r_at_10: float
    r_at_20: float
    all_at_10: float
    sess_at_10: float
    mrr_at_10: float
    mrr_at_50: float
    tokens_at_10: float
    latency_p50_ms: float
    latency_p95_ms: float
    categories: dict[str, dict[str, float]]
    degraded: int

    @property
    def label(self) -> str:
        return f"{self.mode} ({self.embedder})" if self.embedder else self.mode


@attrs.frozen(kw_only=True)
class LocomoReport:
    file: str
    samples: int
    turns: int
    categories: tuple[int, ...]
    skipped_questions: int  # no resolvable evidence
    excluded_questions: int  # named in the exclude set
    embedders: tuple[str, ...]
    scoring: dict[str, Any]
    modes: tuple[LocomoScores, ...]
    gates: tuple[Gate, ...]
    questions: tuple[QuestionResult, ...]

    @property
    def passed(self) -> bool:
        return all(gate.passed for gate in self.gates)
