"""The working projection's table and the triggers that move its generation, on SQLite
(`sql_claims.projection` says why triggers, and what the row holds)."""

from __future__ import annotations

from memory_adapters.sql_claims import projection
from memory_adapters.sql_claims.projection import WORKING_TABLE, firing

__all__ = ["working_statements"]

_TABLE = f"""CREATE TABLE IF NOT EXISTS {WORKING_TABLE} (
  agent_id TEXT NOT NULL PRIMARY KEY CHECK (length(agent_id) BETWEEN 1 AND 128),
  generation INTEGER NOT NULL CHECK (generation >= 0),
  built_at INTEGER CHECK (built_at IS NULL OR built_at >= 0),
  payload TEXT CHECK (payload IS NULL OR json_valid(payload)),
  CHECK ((built_at IS NULL) = (payload IS NULL))
) WITHOUT ROWID"""


def _bump(p: str) -> str:
    # The snapshot goes with the move: a stale text is never kept, let alone shown.
    return f"""INSERT INTO {WORKING_TABLE} (agent_id, generation) VALUES ({p}.agent_id, 1)
      ON CONFLICT (agent_id) DO UPDATE SET
        generation = generation + 1, built_at = NULL, payload = NULL;"""


def _trigger(name: str, event: str, rows: tuple[str, ...]) -> str:
    return f"""CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON agent_memory
          WHEN {firing(rows)}
          BEGIN {" ".join(_bump(row) for row in rows)} END"""


def working_statements() -> tuple[str, ...]:
    return projection.working_statements(_TABLE, _trigger)
