"""The insert path's row helpers as they were before they were made cheaper (issue 15), kept
verbatim as the reference the sameness tests compare the current ones with. Test support only."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import attrs

from memory_adapters.sql_claims.rows import ClaimRow
from memory_adapters.sqlite_store.dialect import to_ms

__all__ = ["former_encode", "former_values"]


def former_values(row: ClaimRow) -> tuple[Any, ...]:
    """What the insert bound, and `ClaimRow.to_claim` read, as it was."""
    return attrs.astuple(row, recurse=False)


def former_encode(value: object) -> object:
    """`SqliteDialect.encode` as it was."""
    if isinstance(value, datetime):
        return to_ms(value)
    if isinstance(value, dict):
        return json.dumps(value)
    return json.dumps(list(value)) if isinstance(value, list | tuple) else value
