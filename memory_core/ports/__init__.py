"""Ports: the typing.Protocol interfaces the pure core talks through (R-ARCH-2).

Each port module states its semantics in docstrings; `memory_contracts` checks them.
"""

from __future__ import annotations

from memory_core.ports.claims import ClaimStore
from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.cursor import CursorStore
from memory_core.ports.extraction import Extractor
from memory_core.ports.providers import EmbeddingProvider, TextProvider
from memory_core.ports.scheduler import TaskScheduler
from memory_core.ports.secrets import SecretPolicy
from memory_core.ports.tape import (
    IngestionProjection,
    TapeAnchorWriter,
    TapeInspectionReader,
    TapeRawEntryReader,
)
from memory_core.ports.vectors import VectorStore

__all__ = [
    "ClaimStore",
    "CursorStore",
    "DomainClock",
    "EmbeddingProvider",
    "Extractor",
    "InfraClock",
    "IngestionProjection",
    "SecretPolicy",
    "TapeAnchorWriter",
    "TapeInspectionReader",
    "TapeRawEntryReader",
    "TaskScheduler",
    "TextProvider",
    "VectorStore",
]
