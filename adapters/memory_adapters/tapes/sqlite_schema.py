"""The SQLite tape's tables and the SQL that reads them.

`tape_entry` is the host's append-only message log (messages, replacements, retractions);
`tape_anchor` holds memory's anchors apart from it, so an anchor never moves the tape head.
`tape_ingestion_projection` (+ `_meta`) is the projection of each session's effective view
and the entry id it was built from (reference §2.3).
"""

from __future__ import annotations

__all__ = [
    "ANCHOR_INSERT",
    "EFFECTIVE",
    "EFFECTIVE_BY_IDS",
    "HEADS",
    "MANIFESTS",
    "MIGRATIONS",
    "PROJECTION_VERSION",
    "READ_CURRENT_RANGE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TAPE_HEAD",
]

SCHEMA_VERSION = 2
# Bumping it makes every stored projection stale, so each session is rebuilt once.
PROJECTION_VERSION = 1

SCHEMA = """
CREATE TABLE tape_entry (
    entry_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL CHECK (length(session_id) > 0),
    type       TEXT NOT NULL CHECK (type IN ('message', 'replacement', 'retraction')),
    message_id TEXT NOT NULL CHECK (length(message_id) > 0),
    order_seq  INTEGER CHECK (order_seq >= 1),
    role       TEXT CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content    TEXT,
    status     TEXT CHECK (status IN ('sent', 'error', 'pending')),
    kind       TEXT CHECK (kind IN ('message', 'compaction')),
    created_at TEXT,  -- when a message was said: ISO-8601 UTC, NULL when unknown
    CHECK (type <> 'message' OR (order_seq IS NOT NULL AND role IS NOT NULL
           AND content IS NOT NULL AND status IS NOT NULL AND kind IS NOT NULL)),
    CHECK (type <> 'replacement' OR (content IS NOT NULL AND status IS NOT NULL))
);
CREATE UNIQUE INDEX tape_entry_message ON tape_entry (message_id) WHERE type = 'message';
CREATE UNIQUE INDEX tape_entry_order ON tape_entry (session_id, order_seq) WHERE type = 'message';
CREATE INDEX tape_entry_session ON tape_entry (session_id, entry_id);
CREATE INDEX tape_entry_edit ON tape_entry (message_id, type, entry_id) WHERE type <> 'message';

CREATE TABLE tape_anchor (
    anchor_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL,
    kind         TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    message_id   TEXT,
    payload_json TEXT NOT NULL CHECK (json_valid(payload_json))
);
CREATE INDEX tape_anchor_agent ON tape_anchor (agent_id, kind, anchor_id);
CREATE INDEX tape_anchor_agent_session ON tape_anchor (agent_id, kind, session_id, anchor_id);
CREATE INDEX tape_anchor_agent_message ON tape_anchor (agent_id, kind, message_id, anchor_id);

CREATE TABLE tape_ingestion_projection (
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    order_seq  INTEGER NOT NULL,
    entry_id   INTEGER NOT NULL,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    status     TEXT NOT NULL,
    kind       TEXT NOT NULL,
    created_at TEXT,
    PRIMARY KEY (session_id, message_id)
) WITHOUT ROWID;
CREATE INDEX tape_ingestion_projection_order ON tape_ingestion_projection (session_id, order_seq);

CREATE TABLE tape_ingestion_projection_meta (
    session_id         TEXT PRIMARY KEY,
    projection_version INTEGER NOT NULL,
    max_entry_id       INTEGER NOT NULL
) WITHOUT ROWID;
"""

# Upgrades: MIGRATIONS[v] takes a version-v schema to v + 1. Version 2 adds `created_at`;
# older messages keep NULL (unknown), so existing projections stay consistent.
MIGRATIONS = {
    1: """
ALTER TABLE tape_entry ADD COLUMN created_at TEXT;
ALTER TABLE tape_ingestion_projection ADD COLUMN created_at TEXT;
""",
}

# The tape head: every row of tape_entry may change the effective view.
TAPE_HEAD = "SELECT MAX(entry_id) FROM tape_entry WHERE session_id = :session"

# The effective view: messages not retracted, with their latest replacement applied.
_EFFECTIVE_SELECT = """
SELECT m.message_id, m.order_seq, m.role,
       COALESCE(r.content, m.content) AS content,
       COALESCE(r.status, m.status) AS status,
       m.kind, m.entry_id, m.created_at
FROM tape_entry AS m
LEFT JOIN tape_entry AS r ON r.entry_id = (
    SELECT MAX(e.entry_id) FROM tape_entry AS e
    WHERE e.message_id = m.message_id AND e.type = 'replacement')
WHERE m.session_id = :session AND m.type = 'message'
  AND NOT EXISTS (
    SELECT 1 FROM tape_entry AS x WHERE x.message_id = m.message_id AND x.type = 'retraction')
"""
EFFECTIVE = _EFFECTIVE_SELECT + " ORDER BY m.order_seq"
EFFECTIVE_BY_IDS = (
    _EFFECTIVE_SELECT
    + " AND m.message_id IN (SELECT value FROM json_each(:ids)) ORDER BY m.order_seq"
)

# R-WRITE-8: both heads and the range in ONE read-only statement, hence one snapshot. Split
# into two queries, an append between them could pair a tape head and a projection head
# from different moments and report "current" for a projection that never was. Always
# returns at least the heads row; range rows only when the heads agree.
HEADS = f"""
SELECT ({TAPE_HEAD}) AS tape_head,
       (SELECT max_entry_id FROM tape_ingestion_projection_meta
        WHERE session_id = :session AND projection_version = {PROJECTION_VERSION})
       AS projection_head
"""
READ_CURRENT_RANGE = f"""
WITH heads AS ({HEADS})
SELECT h.tape_head, h.projection_head,
       p.message_id, p.order_seq, p.role, p.content, p.status, p.kind, p.created_at
FROM heads AS h
LEFT JOIN tape_ingestion_projection AS p
  ON p.session_id = :session AND p.order_seq > :after AND h.tape_head IS h.projection_head
ORDER BY p.order_seq
"""

MANIFESTS = """
SELECT anchor_id, session_id, message_id, payload_json
FROM tape_anchor
WHERE agent_id = :agent AND kind = 'memory/view_assembled'
  AND (:session IS NULL OR session_id = :session)
  AND (:message IS NULL OR message_id = :message)
ORDER BY anchor_id DESC
LIMIT :limit
"""

ANCHOR_INSERT = """
INSERT INTO tape_anchor (session_id, kind, agent_id, message_id, payload_json)
VALUES (:session, :kind, :agent, :message, :payload)
"""
