"""`InMemoryTape`: the tape ports over a process-local event log, for tests, demos and hosts
that keep their conversation elsewhere and hand memory a copy."""

from __future__ import annotations

from memory_adapters.tapes.base import EventTape

__all__ = ["InMemoryTape"]


class InMemoryTape(EventTape):
    """All four tape ports (TapeRawEntryReader, TapeAnchorWriter, TapeInspectionReader,
    IngestionProjection) plus `append_message`, `replace`, `retract` and `fork`.

    Nothing is persisted; the projection is maintained in step with the host's writes, so
    it is current unless a write passed `project=False`.
    """
