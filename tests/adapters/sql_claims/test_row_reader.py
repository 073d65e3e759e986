"""The RowReader reads every stored row exactly as the former path did (a strict cattrs
converter into ClaimRow, then the domain's constructors): the same Claim for valid rows of
every kind, lifecycle, temporal and scope shape, and a CorruptRow for every row a raw writer
could have corrupted — wrong type per column, bad enum, bad JSON, naive or out-of-range
times, NULL where none is allowed (R-TIME-4). Both dialects' column encodings."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from former_row_path import former_claim
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_adapters.postgres_store.dialect import POSTGRES
from memory_adapters.sql_claims.row_reader import RowReader
from memory_adapters.sql_claims.rows import CLAIM_COLUMNS, CorruptRow
from memory_adapters.sqlite_store.dialect import SQLITE, from_ms, to_ms
from memory_core.domain.claims import Category, ClaimKind, EmbeddingState, Lifecycle
from memory_core.domain.temporal import TemporalKind

T0 = datetime(2026, 3, 1, 9, 30, 15, 123000, tzinfo=UTC)
T1 = T0 + timedelta(days=3)
PLUS_TWO = timezone(timedelta(hours=2))


def _encode_sqlite(column: str, value: Any) -> Any:
    if isinstance(value, datetime):
        return to_ms(value)
    if column == "source_entry_ids" and isinstance(value, tuple):
        return json.dumps(list(value))
    return value


def _encode_postgres(column: str, value: Any) -> Any:
    return list(value) if column == "source_entry_ids" and isinstance(value, tuple) else value


DIALECTS = {
    "sqlite": (SQLITE, _encode_sqlite),
    "postgres": (POSTGRES, _encode_postgres),
}

BASE: dict[str, Any] = {
    "id": "mem-1",
    "agent_id": "agent-a",
    "kind": "semantic",
    "content": "tea in the morning",
    "canonical_content": "tea in the morning",
    "category": None,
    "importance": 0.5,
    "confidence": None,
    "temporal_kind": "atemporal",
    "valid_from": None,
    "valid_until": None,
    "temporal_precision": None,
    "temporal_timezone": None,
    "temporal_confidence": None,
    "scope_type": "agent",
    "scope_id": None,
    "user_scope": None,
    "provenance_key": "v2:semantic:abc",
    "source_session": None,
    "source_entry_ids": (),
    "source_first_seq": None,
    "source_last_seq": None,
    "extractor": None,
    "lifecycle_state": "active",
    "embedding_state": "pending",
    "embedding_provider": None,
    "embedding_model": None,
    "embedding_dim": None,
    "revision": 1,
    "created_at": T0,
    "updated_at": T0,
    "last_accessed": None,
    "access_count": 0,
    "superseded_by": None,
    "slot": None,
    "conflict_with": None,
    "conflict_state": None,
}
assert tuple(BASE) == CLAIM_COLUMNS

_TEMPORAL = {"temporal_precision": "day", "temporal_timezone": "UTC", "temporal_confidence": 0.8}
_USER = {"scope_type": "user", "scope_id": "u-1", "user_scope": "u-1"}
_READY = {
    "embedding_state": "ready",
    "embedding_provider": "local",
    "embedding_model": "minilm",
    "embedding_dim": 384,
}
_SOURCE = {
    "source_session": "s-1",
    "source_entry_ids": ("e-1", "e-2"),
    "source_first_seq": 3,
    "source_last_seq": 4,
    "extractor": "rules",
}

VALID: dict[str, dict[str, Any]] = {
    **{f"kind-{kind.value}": {"kind": kind.value} for kind in ClaimKind},
    **{f"lifecycle-{state.value}": {"lifecycle_state": state.value} for state in Lifecycle},
    **{f"embedding-{state.value}": {"embedding_state": state.value} for state in EmbeddingState},
    **{f"category-{category.value}": {"category": category.value} for category in Category},
    **{
        f"temporal-{kind.value}": {"temporal_kind": kind.value, **_TEMPORAL, "valid_from": T0}
        for kind in TemporalKind
        if kind is not TemporalKind.ATEMPORAL
    },
    "temporal-both-bounds": {
        "temporal_kind": "state",
        **_TEMPORAL,
        "valid_from": T0,
        "valid_until": T1,
    },
    "temporal-until-only": {"temporal_kind": "plan", **_TEMPORAL, "valid_until": T1},
    "temporal-undated": {"temporal_kind": "state", **_TEMPORAL},
    "temporal-precision-alias": {
        "temporal_kind": "event",
        **_TEMPORAL,
        "temporal_precision": "exact",
    },
    "temporal-zone": {"temporal_kind": "state", **_TEMPORAL, "temporal_timezone": "Europe/Paris"},
    "temporal-whole-confidence": {"temporal_kind": "state", **_TEMPORAL, "temporal_confidence": 1},
    **{
        f"scope-{kind}": {"scope_type": kind, "scope_id": f"{kind}-7"}
        for kind in ("project", "session")
    },
    "scope-user": _USER,
    "embedded": _READY,
    "embedding-partial": {
        "embedding_provider": "local",
        "embedding_model": None,
        "embedding_dim": 384,
    },
    "embedding-zero-dim": {**_READY, "embedding_dim": 0},
    "source": _SOURCE,
    "source-session-only": {"source_session": "s-1"},
    "whole-importance": {"importance": 1, "confidence": 0},
    "confidence": {"confidence": 0.25},
    "accessed": {"last_accessed": T1, "access_count": 7, "updated_at": T1},
    "superseded": {"superseded_by": "mem-2", "slot": "user.home_city", "revision": 4},
    "conflict": {
        "lifecycle_state": "conflicted",
        "conflict_with": "mem-0",
        "conflict_state": "open",
    },
    "everything": {
        **_USER,
        **_READY,
        **_SOURCE,
        "temporal_kind": "state",
        **_TEMPORAL,
        "valid_from": T0,
    },
}

# Corrupt values as a raw writer could leave them, dialect-neutral where they can be.
CORRUPT: dict[str, dict[str, Any]] = {
    **{
        f"null-{column}": {column: None}
        for column in (
            "id",
            "agent_id",
            "kind",
            "content",
            "canonical_content",
            "importance",
            "temporal_kind",
            "scope_type",
            "source_entry_ids",
            "lifecycle_state",
            "embedding_state",
            "revision",
            "created_at",
            "updated_at",
            "access_count",
        )
    },
    **{
        f"number-in-{column}": {column: 5}
        for column in (
            "id",
            "agent_id",
            "kind",
            "content",
            "canonical_content",
            "category",
            "temporal_kind",
            "temporal_precision",
            "temporal_timezone",
            "scope_type",
            "scope_id",
            "user_scope",
            "provenance_key",
            "source_session",
            "extractor",
            "lifecycle_state",
            "embedding_state",
            "embedding_provider",
            "embedding_model",
            "superseded_by",
            "slot",
            "conflict_with",
            "conflict_state",
        )
    },
    **{
        f"text-in-{column}": {column: "7"}
        for column in (
            "importance",
            "confidence",
            "temporal_confidence",
            "source_first_seq",
            "source_last_seq",
            "embedding_dim",
            "revision",
            "access_count",
        )
    },
    **{
        f"bool-in-{column}": {column: True}
        for column in (
            "importance",
            "confidence",
            "revision",
            "access_count",
            "embedding_dim",
            "content",
        )
    },
    "float-in-revision": {"revision": 2.0},
    "blob-content": {"content": b"tea"},
    "list-content": {"content": ["tea"]},
    **{
        f"bad-enum-{column}": {column: "bogus"}
        for column in (
            "kind",
            "category",
            "lifecycle_state",
            "embedding_state",
            "scope_type",
        )
    },
    "bad-temporal-kind": {"temporal_kind": "sometimes", **_TEMPORAL, "valid_from": T0},
    "bad-precision": {"temporal_kind": "state", **_TEMPORAL, "temporal_precision": "fortnight"},
    "upper-case-kind": {"kind": "SEMANTIC"},
    "atemporal-with-bound": {"valid_from": T0},
    "atemporal-with-zone": {"temporal_timezone": "UTC"},
    "temporal-without-precision": {
        "temporal_kind": "state",
        **_TEMPORAL,
        "temporal_precision": None,
    },
    "temporal-without-zone": {"temporal_kind": "state", **_TEMPORAL, "temporal_timezone": None},
    "temporal-without-confidence": {
        "temporal_kind": "state",
        **_TEMPORAL,
        "temporal_confidence": None,
    },
    "unknown-zone": {"temporal_kind": "state", **_TEMPORAL, "temporal_timezone": "Mars/Olympus"},
    "padded-zone": {"temporal_kind": "state", **_TEMPORAL, "temporal_timezone": " UTC"},
    "confidence-out-of-range": {"temporal_kind": "state", **_TEMPORAL, "temporal_confidence": 1.5},
    "confidence-nan": {"temporal_kind": "state", **_TEMPORAL, "temporal_confidence": math.nan},
    "reversed-interval": {
        "temporal_kind": "state",
        **_TEMPORAL,
        "valid_from": T1,
        "valid_until": T0,
    },
    "agent-scope-with-id": {"scope_id": "u-1"},
    "user-scope-without-id": {"scope_type": "user"},
    "padded-scope-id": {"scope_type": "user", "scope_id": " u-1"},
    "negative-dim": {**_READY, "embedding_dim": -3},
    "text-instant": {"created_at": "2026-03-01T09:30:15Z"},
    "text-optional-instant": {"last_accessed": "yesterday"},
    "entry-ids-number": {"source_entry_ids": 5},
}
# Corrupt only in one dialect's encoding.
CORRUPT_SQLITE: dict[str, dict[str, Any]] = {
    "bool-instant": {"created_at": True},
    "float-instant": {"updated_at": 1.5e12},
    "instant-past-the-calendar": {"created_at": 10**17},
    "instant-before-the-calendar": {"valid_from": -(10**17), "temporal_kind": "state", **_TEMPORAL},
    "entry-ids-not-json": {"source_entry_ids": "[e-1"},
    "entry-ids-object": {"source_entry_ids": '{"a": 1}'},
    "entry-ids-numbers": {"source_entry_ids": "[1, 2]"},
    "entry-ids-list": {"source_entry_ids": ["e-1"]},
}
CORRUPT_POSTGRES: dict[str, dict[str, Any]] = {
    "naive-created": {"created_at": datetime(2026, 3, 1, 9, 30)},
    "naive-bound": {"valid_from": datetime(2026, 3, 1), "temporal_kind": "state", **_TEMPORAL},
    "epoch-instant": {"created_at": 1_700_000_000_000},
    "entry-ids-text": {"source_entry_ids": '["e-1"]'},
    "entry-ids-numbers": {"source_entry_ids": [1, 2]},
}


def _row(dialect: str, changes: dict[str, Any]) -> tuple[Any, ...]:
    _, encode = DIALECTS[dialect]
    return tuple(encode(column, value) for column, value in {**BASE, **changes}.items())


def _former(dialect: str) -> Callable[[tuple[Any, ...]], Any]:
    reader: RowReader = DIALECTS[dialect][0].row_reader
    return lambda values: former_claim(values, instant=reader.instant, entry_ids=reader.entry_ids)


def _outcome(read: Callable[[tuple[Any, ...]], Any], values: tuple[Any, ...]) -> object:
    """The claim and its repr (which tells 1 from 1.0 and a member from its value), or the
    fact that the row was refused as corrupt; any other error escapes."""
    try:
        claim = read(values)
    except CorruptRow:
        return CorruptRow
    return claim, repr(claim)


def _cases(catalogue: dict[str, dict[str, Any]], *dialects: str) -> list[Any]:
    return [
        pytest.param(dialect, changes, id=f"{dialect}-{name}")
        for name, changes in catalogue.items()
        for dialect in dialects
    ]


@pytest.mark.parametrize(("dialect", "changes"), _cases(VALID, "sqlite", "postgres"))
def test_a_valid_row_reads_as_the_same_claim(dialect: str, changes: dict[str, Any]) -> None:
    values = _row(dialect, changes)
    reader: RowReader = DIALECTS[dialect][0].row_reader
    new = _outcome(reader.claim, values)
    assert new is not CorruptRow
    assert new == _outcome(_former(dialect), values)
    # The write paths' ClaimRow reads to the same claim.
    assert _outcome(lambda v: reader.claim_row(v).to_claim(), values) == new


@pytest.mark.parametrize(
    ("dialect", "changes"),
    [
        *_cases(CORRUPT, "sqlite", "postgres"),
        *_cases(CORRUPT_SQLITE, "sqlite"),
        *_cases(CORRUPT_POSTGRES, "postgres"),
    ],
)
def test_a_corrupt_row_is_refused_as_it_was(dialect: str, changes: dict[str, Any]) -> None:
    """R-TIME-4: a CorruptRow (which list reads log by id and skip), never another error."""
    values = _row(dialect, changes)
    reader: RowReader = DIALECTS[dialect][0].row_reader
    assert _outcome(_former(dialect), values) is CorruptRow
    assert _outcome(reader.claim, values) is CorruptRow
    assert _outcome(lambda v: reader.claim_row(v).to_claim(), values) is CorruptRow


def test_a_postgres_timestamp_in_another_zone_reads_as_utc() -> None:
    values = _row("postgres", {"created_at": T0.astimezone(PLUS_TWO)})
    claim = POSTGRES.row_reader.claim(values)
    assert claim.created_at.tzinfo is UTC and claim.created_at == T0
    assert _outcome(POSTGRES.row_reader.claim, values) == _outcome(_former("postgres"), values)


def test_a_statement_with_the_wrong_columns_is_an_error_not_a_corrupt_row() -> None:
    with pytest.raises(ValueError, match="columns"):
        SQLITE.row_reader.claim(_row("sqlite", {})[:-1])


def test_a_shape_seen_before_is_still_read_value_by_value() -> None:
    """The per-shape plan decides only what types allow; a later row of the same shape
    with a bad value (an unknown enum, a bad JSON list) is still refused."""
    reader = SQLITE.row_reader
    reader.claim(_row("sqlite", _SOURCE))
    for changes in ({**_SOURCE, "kind": "bogus"}, {**_SOURCE, "source_entry_ids": "[1]"}):
        with pytest.raises(CorruptRow):
            reader.claim(_row("sqlite", changes))


# Per column: a few valid values and a few a raw writer might leave, for random rows.
_PLAUSIBLE: dict[str, list[Any]] = {
    "kind": [kind.value for kind in ClaimKind] + ["bogus", None, 3],
    "category": [None, "heuristic", "bogus", 1],
    "importance": [0.5, 1, 0, 1.5, None, "x", True],
    "confidence": [None, 0.3, 1, "x"],
    "temporal_kind": [kind.value for kind in TemporalKind] + [None, "later"],
    "valid_from": [None, T0, T1],
    "valid_until": [None, T0, T1],
    "temporal_precision": [None, "day", "exact", "fortnight"],
    "temporal_timezone": [None, "UTC", "Asia/Tokyo", "Nowhere/Land", 4],
    "temporal_confidence": [None, 0.5, 1, 2.0, "x"],
    "scope_type": ["agent", "user", "session", "galaxy", None],
    "scope_id": [None, "u-1", "", " u"],
    "user_scope": [None, "u-1", 2],
    "source_session": [None, "s-1", 9],
    "source_entry_ids": [(), ("e-1",), 7],
    "source_first_seq": [None, 1, "1", True],
    "lifecycle_state": [state.value for state in Lifecycle] + ["gone"],
    "embedding_state": [state.value for state in EmbeddingState] + ["lost"],
    "embedding_provider": [None, "local", ""],
    "embedding_model": [None, "minilm"],
    "embedding_dim": [None, 384, 0, -1, "384"],
    "revision": [1, 3, None, 1.0],
    "created_at": [T0, None, "now"],
    "last_accessed": [None, T1],
    "access_count": [0, 5, -1, None],
    "superseded_by": [None, "mem-2"],
    "conflict_state": [None, "open", 0],
}


@settings(max_examples=400, deadline=None)
@given(
    dialect=st.sampled_from(sorted(DIALECTS)),
    changes=st.fixed_dictionaries(
        {}, optional={column: st.sampled_from(values) for column, values in _PLAUSIBLE.items()}
    ),
)
def test_random_rows_read_as_they_did(dialect: str, changes: dict[str, Any]) -> None:
    values = _row(dialect, changes)
    reader: RowReader = DIALECTS[dialect][0].row_reader
    assert _outcome(reader.claim, values) == _outcome(_former(dialect), values)


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_epoch_milliseconds_read_as_before(ms: int) -> None:
    """The SQLite instant is built with a cheaper call; the same instant as before, and
    the same OverflowError past the calendar (which the reader turns into a CorruptRow)."""

    def outcome(read: Callable[[], datetime]) -> object:
        try:
            return read()
        except OverflowError:
            return OverflowError

    before = outcome(lambda: datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms))
    assert outcome(lambda: from_ms(ms)) == before


@pytest.mark.parametrize("stored", ["[]", '["e-1"]', " [ ] ", '["a", "b"]'])
def test_an_empty_entry_list_skips_the_parse_with_the_same_result(stored: str) -> None:
    assert SQLITE.row_reader.entry_ids(stored) == tuple(json.loads(stored))
