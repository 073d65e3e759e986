"""Which tape entries an extractor may read: sent messages, and for user facts only the user's.

Compaction summaries, anchors, failed or pending messages and tool output are never sources
(reference §7.1); assistant text is context for a model at most, never evidence of a user fact.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory_core.ports.tape import EntryKind, EntryRole, EntryStatus, TapeEntry

__all__ = ["conversation_entries", "user_messages"]


def _is_sent_message(entry: TapeEntry) -> bool:
    return entry.kind is EntryKind.MESSAGE and entry.status is EntryStatus.SENT


def user_messages(entries: Iterable[TapeEntry]) -> list[TapeEntry]:
    """Sent user messages with visible text, in tape order."""
    return [
        entry
        for entry in entries
        if _is_sent_message(entry) and entry.role is EntryRole.USER and entry.content.strip()
    ]


def conversation_entries(entries: Iterable[TapeEntry]) -> list[TapeEntry]:
    """Sent user and assistant messages with visible text, in tape order."""
    return [
        entry
        for entry in entries
        if _is_sent_message(entry)
        and entry.role in (EntryRole.USER, EntryRole.ASSISTANT)
        and entry.content.strip()
    ]
