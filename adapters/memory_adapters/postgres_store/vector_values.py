"""Vector input checks and pgvector's text form.

Every vector is checked as the float32 values pgvector will store, before anything is sent:
zero-length, wrong-dimension, NaN/infinite (including float64 values that overflow float32)
and zero vectors raise ValidationError naming the field, never the values (R-VEC-1).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from memory_core.domain.errors import ValidationError

__all__ = [
    "MAX_CLAIM_ID_LENGTH",
    "check_top_k",
    "claim_id_set",
    "query_texts",
    "to_text",
    "vector_rows",
]

MAX_CLAIM_ID_LENGTH = 512
_NUMERIC = "iuf"


def _checked(vector: Sequence[float], dim: int, field: str) -> np.ndarray:
    try:
        row = np.asarray(vector)
    except (TypeError, ValueError) as exc:
        raise ValidationError(field, "must be a sequence of numbers") from exc
    if row.dtype.kind not in _NUMERIC or row.ndim != 1:
        raise ValidationError(field, "must be a one-dimensional sequence of numbers")
    if row.size == 0:
        raise ValidationError(field, "must not be empty")
    if row.size != dim:
        raise ValidationError(field, f"has dimension {row.size}, expected {dim}")
    with np.errstate(over="ignore", invalid="ignore"):
        stored = row.astype(np.float32)
    if not np.isfinite(stored).all():
        raise ValidationError(field, "must contain only finite numbers")
    if not np.abs(stored).max() > 0:
        raise ValidationError(field, "must not be a zero vector")
    return stored


def to_text(row: np.ndarray) -> str:
    """pgvector's text input. float32 → float64 → shortest repr parses back (strtof) to the
    same float32, so the stored value is exactly the checked one."""
    return "[" + ",".join(map(repr, row.tolist())) + "]"


def vector_rows(
    vectors: Mapping[str, Sequence[float]], dim: int, *, field: str = "vectors"
) -> tuple[list[str], list[str]]:
    """Claim ids and the text form of their checked vectors, in mapping order."""
    ids: list[str] = []
    texts: list[str] = []
    for claim_id, vector in vectors.items():
        if not isinstance(claim_id, str) or not claim_id:
            raise ValidationError(field, "claim ids must be non-empty strings")
        if len(claim_id) > MAX_CLAIM_ID_LENGTH:
            raise ValidationError(field, f"claim id longer than {MAX_CLAIM_ID_LENGTH} characters")
        ids.append(claim_id)
        texts.append(to_text(_checked(vector, dim, f"{field}[{claim_id!r}]")))
    return ids, texts


def query_texts(vectors: Sequence[Sequence[float]], dim: int) -> list[str]:
    return [to_text(_checked(v, dim, f"vectors[{i}]")) for i, v in enumerate(vectors)]


def check_top_k(top_k: int) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ValidationError("top_k", "must be a non-negative integer")


def claim_id_set(ids: Collection[str], field: str) -> list[str]:
    """Distinct ids, ascending; one string is refused (it would iterate as characters)."""
    if isinstance(ids, str):
        raise ValidationError(field, "must be a collection of claim ids, not one string")
    wanted = set(ids)
    if any(not isinstance(claim_id, str) or not claim_id for claim_id in wanted):
        raise ValidationError(field, "claim ids must be non-empty strings")
    return sorted(wanted)
