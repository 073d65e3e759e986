"""Constants and types shared by the extractor tests (imported by module name, as pytest puts
this directory on sys.path)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memory_core.ports.extraction import ExtractionRequest, ExtractionResult

__all__ = ["CORPUS_MESSAGES", "REFERENCE", "ZONE", "MakeRequest", "RunExtractor", "Turn"]

REFERENCE = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # 11:00 in Berlin, a Monday
ZONE = "Europe/Berlin"
# The user messages of the extraction corpus, conversation by conversation.
CORPUS_MESSAGES = [
    message["user"]
    for conversation in json.loads(
        (Path(__file__).parents[2] / "fixtures" / "extraction" / "corpus.json").read_text()
    )["conversations"]
    for message in conversation["messages"]
]

Turn = tuple[str, str]  # (role, text)
MakeRequest = Callable[..., ExtractionRequest]
RunExtractor = Callable[..., ExtractionResult]
