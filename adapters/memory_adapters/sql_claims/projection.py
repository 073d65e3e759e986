"""The working projection's row, `agent_memory_working` (R-READ-9, R-MAINT-3, R-STORE-2).

One row per agent: `generation`, the agent's source generation, and the snapshot stored for
it (`built_at`, `payload`: the snapshot as the domain's JSON). The generation is moved by
the dialects' triggers on `agent_memory` (`sqlite_store.projection_schema`,
`postgres_store.projection_schema`), in the transaction of every insert, update or delete
of an Agent-scope semantic, episodic or reflection row — whichever kit module, repair or
raw statement makes it — and the same statement empties `built_at` and `payload`, so the
text of a deleted claim leaves this row as the claim leaves its own (secure_delete zeroes
the freed bytes on SQLite). Triggers rather than a call in each writer: no writer can forget
it, and the generation's move is atomic with the change by construction.

The store is one statement that applies only while the generation is still the one the
builder read: compare-and-set without a read-modify-write. A missing row reads as generation
0 and only a builder that read 0 may create it; the first trigger creates it at 1, and the
migration seeds every agent holding claims at 1 (`SEED_GENERATIONS`), so "no row" means "no
claim was ever there or retirement removed them all". Retirement deletes the row; a clear
keeps it (its deletes move the generation, and a rebuild from before the clear is refused).
`WorkingProjectionMethods` is the `WorkingProjections` role the `SqlClaimStore` inherits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager

from memory_adapters.sql_claims.claims import ensure_not_fenced
from memory_adapters.sql_claims.queries import RECALLABLE_KINDS_SQL
from memory_adapters.sql_claims.session import Session
from memory_core.domain.scope import validate_agent_id
from memory_core.domain.serialization import structure, unstructure
from memory_core.domain.validation import check_instance, check_int
from memory_core.ports.claims import StoredWorking, WorkingSnapshot

__all__ = [
    "PERSONA_INDEX",
    "SEED_GENERATIONS",
    "TRIGGER_EVENTS",
    "WATCHED_COLUMNS",
    "WORKING_TABLE",
    "WorkingProjectionMethods",
    "firing",
    "projected",
    "working_statements",
]

WORKING_TABLE = "agent_memory_working"
# What `project_working` reads of a row, and what decides whether it is a candidate. Not
# access_count/last_accessed (every turn writes them; they only break ties) nor the
# embedding columns.
WATCHED_COLUMNS = (
    "agent_id",
    "kind",
    "content",
    "importance",
    "revision",
    "created_at",
    "lifecycle_state",
    "superseded_by",
    "scope_type",
    "temporal_kind",
    "valid_from",
    "valid_until",
    "temporal_precision",
    "temporal_timezone",
    "temporal_confidence",
)


# The turn also reads the active persona: without this index that lookup walks the agent's
# whole listing (the common case has no persona row at all), ~30 ms per 3,000 claims.
PERSONA_INDEX = """CREATE INDEX IF NOT EXISTS agent_memory_persona
  ON agent_memory (agent_id, persona_state, created_at DESC, id DESC) WHERE kind = 'persona'"""


# The three triggers both dialects create, as (name, event, rows whose projectedness fires
# it): an update moves the generation of the agent it left and the one it reached.
TRIGGER_EVENTS = (
    ("agent_memory_working_ai", "INSERT", ("NEW",)),
    ("agent_memory_working_au", f"UPDATE OF {', '.join(WATCHED_COLUMNS)}", ("OLD", "NEW")),
    ("agent_memory_working_ad", "DELETE", ("OLD",)),
)


def firing(rows: tuple[str, ...]) -> str:
    """The trigger's WHEN condition over `rows` (`OLD`, `NEW`)."""
    return " OR ".join(projected(f"{row}.") for row in rows)


def projected(p: str) -> str:
    """The row (`OLD.` or `NEW.`) is one a working projection may show, in some lifecycle."""
    return f"({p}scope_type = 'agent' AND {p}kind IN {RECALLABLE_KINDS_SQL})"


# Every agent holding claims when the table is created starts at generation 1, not 0
# (idempotent: a migration may be re-applied over a file that has it).
SEED_GENERATIONS = (
    f"INSERT INTO {WORKING_TABLE} (agent_id, generation)"
    " SELECT DISTINCT agent_id, 1 FROM agent_memory WHERE true"
    " ON CONFLICT (agent_id) DO NOTHING"
)


def working_statements(
    table: str, trigger: Callable[[str, str, tuple[str, ...]], str], *functions: str
) -> tuple[str, ...]:
    """The projection's DDL in a dialect, in the order it must run: `table` (the dialect's
    CREATE TABLE), the seeded generations, the persona index, the dialect's `functions` its
    triggers call, then one trigger per `TRIGGER_EVENTS` row, `trigger(name, event, rows)`
    (the rows' WHEN condition is `firing(rows)`)."""
    triggers = tuple(trigger(name, event, rows) for name, event, rows in TRIGGER_EVENTS)
    return (table, SEED_GENERATIONS, PERSONA_INDEX, *functions, *triggers)


# One statement: the row and whether a clear fences the agent (then nothing is shown).
_READ = f"""SELECT w.generation, w.payload,
    EXISTS (SELECT 1 FROM agent_memory_clear_job j WHERE j.agent_id = w.agent_id)
  FROM {WORKING_TABLE} w WHERE w.agent_id = ?"""
# Generation 0 is "no row": only then may the store create it (a retirement deletes the
# row, and a builder that read an older generation must not bring it back).
_CREATE = f"""INSERT INTO {WORKING_TABLE} AS w (agent_id, generation, built_at, payload)
  VALUES (?, 0, ?, ?)
  ON CONFLICT (agent_id) DO UPDATE SET built_at = excluded.built_at, payload = excluded.payload
  WHERE w.generation = 0"""
_UPDATE = f"""UPDATE {WORKING_TABLE} SET built_at = ?, payload = ?
  WHERE agent_id = ? AND generation = ?"""


# Every turn reads the agent's row, and structuring its payload (the snapshot's entries,
# ~2 ms for 200 of them) was most of that read; the payload changes only when the row is
# rebuilt. So each agent's last payload text and its snapshot are kept, for a bounded number
# of agents: the same text is the same snapshot, any other text is structured afresh, and
# nothing is held that the stored row does not hold now or did at the agent's last read.
_LAST_SNAPSHOT: dict[tuple[str, str], tuple[str, WorkingSnapshot]] = {}
_LAST_SNAPSHOT_AGENTS = 1_024


def _snapshot(session: Session, agent_id: str, payload: str) -> WorkingSnapshot:
    key = (type(session.dialect).__qualname__, agent_id)
    kept = _LAST_SNAPSHOT.get(key)
    if kept is not None and kept[0] == payload:
        return kept[1]
    snapshot = structure(json.loads(payload), WorkingSnapshot)
    if key not in _LAST_SNAPSHOT and len(_LAST_SNAPSHOT) >= _LAST_SNAPSHOT_AGENTS:
        _LAST_SNAPSHOT.clear()  # bounded by starting over; single dict operations are atomic
    _LAST_SNAPSHOT[key] = (payload, snapshot)
    return snapshot


def read(session: Session, agent_id: str) -> StoredWorking:
    row = session.one(_READ, (agent_id,))
    if row is None:
        _LAST_SNAPSHOT.pop((type(session.dialect).__qualname__, agent_id), None)
        return StoredWorking(generation=0, snapshot=None)
    generation, payload, fenced = int(row[0]), row[1], bool(row[2])
    if payload is None or fenced:
        _LAST_SNAPSHOT.pop((type(session.dialect).__qualname__, agent_id), None)
        return StoredWorking(generation=generation, snapshot=None)
    return StoredWorking(generation=generation, snapshot=_snapshot(session, agent_id, payload))


def store(session: Session, agent_id: str, snapshot: WorkingSnapshot, generation: int) -> bool:
    ensure_not_fenced(session, agent_id)
    payload = json.dumps(unstructure(snapshot), ensure_ascii=False, separators=(",", ":"))
    if generation == 0:
        return bool(session.changed(_CREATE, (agent_id, snapshot.built_at, payload)))
    return bool(session.changed(_UPDATE, (snapshot.built_at, payload, agent_id, generation)))


class WorkingProjectionMethods:
    """The `WorkingProjections` role over the concrete store's transactions."""

    _read: Callable[[], AbstractContextManager[Session]]
    _write: Callable[..., AbstractContextManager[Session]]

    def working_projection(self, agent_id: str) -> StoredWorking:
        validate_agent_id(agent_id)
        with self._read() as session:
            return read(session, agent_id)

    def store_working_projection(
        self, agent_id: str, snapshot: WorkingSnapshot, *, generation: int
    ) -> bool:
        validate_agent_id(agent_id)
        check_instance(snapshot, WorkingSnapshot, "snapshot")
        check_int(generation, "generation", minimum=0)
        with self._write(agent_id) as session:
            return store(session, agent_id, snapshot, generation)
