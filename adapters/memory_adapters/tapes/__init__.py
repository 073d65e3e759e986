"""First-party tape adapters: in-memory, JSON Lines file, and SQLite host store.

Each implements the four tape ports (`memory_core.ports.tape`) and the writes a host, a
demo or a test performs: `append_message`, `replace`, `retract`, `fork`.
"""

from __future__ import annotations

from memory_adapters.tapes.jsonl import JsonlTape, TapeFormatError
from memory_adapters.tapes.memory import InMemoryTape
from memory_adapters.tapes.sqlite import SqliteTape

__all__ = ["InMemoryTape", "JsonlTape", "SqliteTape", "TapeFormatError"]
