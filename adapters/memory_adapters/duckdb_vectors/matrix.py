"""One agent's vectors resident in memory: the exact cosine scan runs here, not in SQL.

A numpy scan over one agent's contiguous float32 matrix runs at memory bandwidth, while
DuckDB's SQL similarity kernel is 4–9× slower on the same data (reference benchmarks §3), so
DuckDB stays the durable store and this matrix is what queries scan. Rows are kept unit
length, so a matrix–vector product is the cosine similarity. Upserts overwrite rows in place
or append into spare capacity (amortised growth); deletes move the last row into the hole, so
the scanned block stays dense.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np

__all__ = ["ResidentMatrix", "ScoredId"]

ScoredId = tuple[str, float]

_GROWTH = 1.5
_MIN_CAPACITY = 64


class ResidentMatrix:
    """Unit rows with their claim ids.

    Scans may run from any thread at any time; mutations come from one writer at a time
    (the store's per-agent lock guarantees it), which lets growth copy the matrix without
    stalling scans.
    """

    def __init__(self, dim: int, capacity: int = 0) -> None:
        self._dim = dim
        self._rows = np.empty((max(capacity, _MIN_CAPACITY), dim), dtype=np.float32)
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        # A scan and a mutation never overlap: a reader sees a batch entirely or not at all.
        self._lock = threading.Lock()

    @classmethod
    def filled(
        cls, dim: int, count: int, fill: Callable[[np.ndarray], Sequence[str]]
    ) -> ResidentMatrix:
        """A matrix of `count` unit rows that `fill` writes in place into the matrix's own
        block (and returns their distinct ids): the rows are never staged in a second copy."""
        matrix = cls(dim, capacity=count + count // 16)
        ids = list(fill(matrix._rows[:count]))
        if len(ids) != count or len(set(ids)) != count:
            raise ValueError("fill must return one distinct id per row")
        matrix._ids = ids
        matrix._index = {claim_id: row for row, claim_id in enumerate(ids)}
        return matrix

    @property
    def dim(self) -> int:
        return self._dim

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, claim_id: object) -> bool:
        return claim_id in self._index

    def ids(self) -> list[str]:
        """The resident ids, ascending."""
        with self._lock:
            return sorted(self._ids)

    def id_set(self) -> set[str]:
        with self._lock:
            return set(self._index)

    def row(self, claim_id: str) -> np.ndarray | None:
        """A copy of the stored unit row, or None."""
        with self._lock:
            position = self._index.get(claim_id)
            return None if position is None else self._rows[position].copy()

    def contents(self) -> tuple[list[str], np.ndarray]:
        """The ids in row order and a copy-free view of their rows (for a snapshot of a
        closed namespace, when no writer is left)."""
        with self._lock:
            return list(self._ids), self._rows[: len(self._ids)]

    def nbytes(self) -> int:
        """Bytes a full scan reads."""
        return len(self._ids) * self._dim * 4

    def upsert(self, ids: Sequence[str], unit_rows: np.ndarray) -> None:
        """Insert or overwrite rows (already unit length) by id."""
        self._reserve(len(self._ids) + len(ids))
        with self._lock:
            index = self._index
            existing = [
                (position, index[claim_id])
                for position, claim_id in enumerate(ids)
                if claim_id in index
            ]
            if existing:
                sources, targets = zip(*existing, strict=True)
                self._rows[list(targets)] = unit_rows[list(sources)]
            fresh = [position for position, claim_id in enumerate(ids) if claim_id not in index]
            if len(fresh) != len(set(ids[position] for position in fresh)):
                raise ValueError("duplicate claim ids in one batch")
            start = len(self._ids)
            # New rows are one block copy, not a Python loop (warm-up appends millions).
            block = unit_rows if len(fresh) == len(ids) else unit_rows[fresh]
            self._rows[start : start + len(fresh)] = block
            new_ids = [ids[position] for position in fresh]
            self._ids.extend(new_ids)
            index.update(zip(new_ids, range(start, start + len(fresh)), strict=True))

    def remove(self, ids: Iterable[str]) -> int:
        """Drop rows by id; unknown ids are ignored. Returns how many were present."""
        removed = 0
        with self._lock:
            for claim_id in ids:
                row = self._index.pop(claim_id, None)
                if row is None:
                    continue
                removed += 1
                last = len(self._ids) - 1
                if row != last:
                    moved = self._ids[last]
                    self._rows[row] = self._rows[last]
                    self._ids[row] = moved
                    self._index[moved] = row
                self._ids.pop()
        return removed

    def top_k(
        self, queries: np.ndarray, k: int, *, exclude: Sequence[str | None] = ()
    ) -> list[list[ScoredId]]:
        """For each unit query row, the `k` most similar ids: similarity descending, ties by
        id ascending. `exclude[j]` (if given) is left out of query j's answer."""
        answers: list[list[ScoredId]] = []
        with self._lock:
            count = len(self._ids)
            if count == 0 or k <= 0 or len(queries) == 0:
                return [[] for _ in range(len(queries))]
            block = self._rows[:count]
            # One pass over the matrix for every query (sgemv for one, sgemm for a batch).
            if len(queries) == 1:
                columns: Sequence[np.ndarray] = [block @ queries[0]]
            else:
                scores = block @ queries.T
                columns = [scores[:, j] for j in range(len(queries))]
            for j, column in enumerate(columns):
                skip = exclude[j] if j < len(exclude) else None
                skipped_row = self._index.get(skip) if skip is not None else None
                if skipped_row is not None:
                    # In place: the product is fresh and column j is query j's alone.
                    column[skipped_row] = -np.inf
                answers.append(self._select(column, k, count - (skipped_row is not None)))
        return answers

    def _select(self, scores: np.ndarray, k: int, eligible: int) -> list[ScoredId]:
        k = min(k, eligible)
        if k <= 0:
            return []
        count = len(scores)
        if k < count:
            # The k-th largest score by value (a partition without the index array), and
            # every row tied with it competes, so the id tie-break is exact.
            threshold = np.partition(scores, count - k)[count - k]
            (candidates,) = (scores >= threshold).nonzero()
        else:
            (candidates,) = (scores > -np.inf).nonzero()
        ids = self._ids
        # Negated scores sort as plain tuples, similarity descending then id ascending,
        # without a key function; the candidates are few (k plus ties). Few numpy calls too:
        # after the scan, each costs ~15 µs of cache misses.
        negated = [-score for score in scores[candidates].tolist()]
        ranked = sorted(zip(negated, [ids[row] for row in candidates.tolist()], strict=True))
        # Clamped into [-1, 1] (float rounding can step past 1): a chained comparison for
        # the common in-range score, the clamp only otherwise.
        return [
            (claim_id, -neg if -1.0 <= -neg <= 1.0 else min(1.0, max(-1.0, -neg)))
            for neg, claim_id in ranked[:k]
        ]

    def _reserve(self, needed: int) -> None:
        # Outside the lock: only the single writer changes rows, so the copy is consistent,
        # and scans keep reading the old block until the swap.
        capacity = len(self._rows)
        if needed <= capacity:
            return
        grown = np.empty((max(needed, int(capacity * _GROWTH)), self._dim), dtype=np.float32)
        count = len(self._ids)
        grown[:count] = self._rows[:count]
        with self._lock:
            self._rows = grown
