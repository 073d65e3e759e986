"""Evaluation reports as JSON documents: what `--json` prints and the report file holds.

Each document carries when and where it was measured (UTC time, platform, Python, CPU
count), so a number quoted in docs/evaluation.md can be traced to a run. LoCoMo documents
hold indices, dia ids and numbers only — the dataset's licence keeps its text out.
"""

from __future__ import annotations

import os
import platform
import sys
from datetime import UTC, datetime
from typing import Any

import attrs

from memory_plugins.eval.behaviour import BehaviourReport
from memory_plugins.eval.locomo import LocomoReport
from memory_plugins.eval.retrieval import RetrievalReport

__all__ = ["behaviour_document", "locomo_document", "machine", "retrieval_document"]


def machine() -> dict[str, Any]:
    return {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }


def _plain(value: object) -> Any:
    return attrs.asdict(value)  # type: ignore[arg-type]


def behaviour_document(reports: list[BehaviourReport]) -> dict[str, Any]:
    fixtures = []
    for report in reports:
        document = _plain(report)
        document["passed"] = report.passed
        document["axes"] = [_plain(axis) for axis in report.axes]
        for scenario, result in zip(document["scenarios"], report.scenarios, strict=True):
            scenario["passed"] = result.passed
        fixtures.append(document)
    return {
        "suite": "behaviour",
        "passed": bool(reports) and all(report.passed for report in reports),
        "run": machine(),
        "fixtures": fixtures,
    }


def retrieval_document(report: RetrievalReport) -> dict[str, Any]:
    document = _plain(report)
    return {"suite": "retrieval", "passed": report.passed, "run": machine(), **document}


def locomo_document(report: LocomoReport) -> dict[str, Any]:
    document = _plain(report)
    return {"suite": "locomo", "passed": report.passed, "run": machine(), **document}
