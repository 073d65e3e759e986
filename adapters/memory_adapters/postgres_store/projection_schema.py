"""The working projection's table and the triggers that move its generation, on PostgreSQL
(`sql_claims.projection` says why triggers, and what the row holds)."""

from __future__ import annotations

from memory_adapters.sql_claims import projection
from memory_adapters.sql_claims.projection import WORKING_TABLE, firing

__all__ = ["working_statements"]

_TABLE = f"""CREATE TABLE IF NOT EXISTS {WORKING_TABLE} (
  agent_id text COLLATE "C" NOT NULL PRIMARY KEY,
  generation bigint NOT NULL CHECK (generation >= 0),
  built_at timestamptz,
  payload text,
  CHECK ((built_at IS NULL) = (payload IS NULL))
)"""

# The snapshot goes with the move: a stale text is never kept, let alone shown.
_FUNCTION = f"""CREATE OR REPLACE FUNCTION agent_memory_working_bump() RETURNS trigger
  LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO {WORKING_TABLE} AS w (agent_id, generation) VALUES (OLD.agent_id, 1)
    ON CONFLICT (agent_id) DO UPDATE SET
      generation = w.generation + 1, built_at = NULL, payload = NULL;
  END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.agent_id <> OLD.agent_id) THEN
    INSERT INTO {WORKING_TABLE} AS w (agent_id, generation) VALUES (NEW.agent_id, 1)
    ON CONFLICT (agent_id) DO UPDATE SET
      generation = w.generation + 1, built_at = NULL, payload = NULL;
  END IF;
  RETURN NULL;
END $$"""


def _trigger(name: str, event: str, rows: tuple[str, ...]) -> str:
    return f"""CREATE OR REPLACE TRIGGER {name} AFTER {event} ON agent_memory
          FOR EACH ROW WHEN ({firing(rows)})
          EXECUTE FUNCTION agent_memory_working_bump()"""


def working_statements() -> tuple[str, ...]:
    return projection.working_statements(_TABLE, _trigger, _FUNCTION)
