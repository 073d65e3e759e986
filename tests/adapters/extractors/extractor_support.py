"""Constants and types shared by the extractor tests (imported by module name, as pytest puts
this directory on sys.path)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from memory_core.ports.extraction import ExtractionRequest, ExtractionResult

__all__ = ["REFERENCE", "ZONE", "MakeRequest", "RunExtractor", "Turn"]

REFERENCE = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # 11:00 in Berlin, a Monday
ZONE = "Europe/Berlin"

Turn = tuple[str, str]  # (role, text)
MakeRequest = Callable[..., ExtractionRequest]
RunExtractor = Callable[..., ExtractionResult]
